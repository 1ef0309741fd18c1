"""The full-text side of pv.kb.chunk: the ``search_tsv`` column, its index version and the caches derived from it.

- ``_index_chunks`` writes ``search_tsv`` (German, compound parts from ``lib/search/compounds.py``, field weights);
  the importer calls it for the chunks a batch touched;
- every indexing bumps the index version (a fresh token in ``ir.config_parameter``), which renews the
  per-process caches of this file in every worker: the lexicon for compound splitting and the document
  frequency of each lexeme. The synonym table's cache follows the table's own rows.

The retriever (``models/pv_kb_retriever.py``) only reads: the column and these caches. The embedding side of
the chunks is ``models/pv_kb_chunk_embed.py``.
"""
import threading
import uuid

from odoo import api, models
from odoo.tools import SQL

from ..lib.answer import gate
from ..lib.search import compounds, entry_card, fulltext
from ..lib.text.german import fold_plain, word_tokens

_CACHE_LOCK = threading.Lock()
_CACHE = {}              # (dbname, name) -> (version, value): lexicon, synonyms, document frequencies


class PvKbChunkIndex(models.Model):
    _inherit = "pv.kb.chunk"

    def _init_search_column(self):
        self.env.cr.execute("""
            ALTER TABLE pv_kb_chunk ADD COLUMN IF NOT EXISTS search_tsv tsvector;
            CREATE INDEX IF NOT EXISTS pv_kb_chunk_search_tsv_idx ON pv_kb_chunk USING gin (search_tsv);
        """)

    # --- the index version and the caches that follow it ---------------------
    @api.model
    def _index_version(self):
        return self.env["ir.config_parameter"].sudo().get_param("pv_kb.index_version", "0")

    @api.model
    def _bump_index_version(self):
        # a fresh token, not a counter: a rolled-back import must not leave caches that a later one would reuse
        self.env["ir.config_parameter"].sudo().set_param("pv_kb.index_version", uuid.uuid4().hex)

    @api.model
    def _cached(self, name, version, build):
        """Per-process cache of a value derived from the base, rebuilt when ``version`` changes."""
        key = (self.env.cr.dbname, name)
        cached = _CACHE.get(key)
        if cached and cached[0] == version:
            return cached[1]
        value = build()
        with _CACHE_LOCK:
            _CACHE[key] = (version, value)
        return value

    @api.model
    def _lexicon(self):
        """Word counts of the active base: the dictionary for compound splitting (lib.search.compounds)."""
        def build():
            self.env.cr.execute("""
                SELECT c.text, c.heading_path, e.name FROM pv_kb_chunk c JOIN pv_kb_entry e ON e.id = c.entry_id
                 WHERE e.active AND c.section_key <> %s""", [entry_card.CARD_KEY])
            return compounds.build_lexicon(" ".join(filter(None, row)) for row in self.env.cr.fetchall())
        return self._cached("lexicon", self._index_version(), build)

    @api.model
    def _synonyms_version(self):
        self.env["pv.kb.synonym"].flush_model()
        self.env.cr.execute("SELECT count(*), max(write_date) FROM pv_kb_synonym WHERE active")
        return self.env.cr.fetchone()

    @api.model
    def _synonyms(self):
        return self._cached("synonyms", self._synonyms_version(),
                            lambda: fulltext.parse_synonyms(self.env["pv.kb.synonym"].sudo()._rows()))

    @api.model
    def _synonym_terms(self):
        """The folded words of the synonym table's terms that lead into the base: one of their expansions is named
        by the active entries (lib/answer/gate.unknown_subject counts them as known; a term mapped only to words
        the base never uses is still an unknown subject)."""
        def build():
            lexicon = self._lexicon()
            return self._synonyms().grounded_words(lambda word: gate.known_word(word, lexicon))
        # rebuilt when the base or the synonym table changes
        return self._cached("synonym_terms", (self._index_version(), self._synonyms_version()), build)

    @api.model
    def _known_terms(self):
        """The words the subject gate counts as known beside the base's text: the synonym table's terms and the
        tags of the active entries ("Väterkarenz" tags the entry on Karenz that only says "Karenz des Vaters")."""
        def build():
            self.env.cr.execute("""
                SELECT DISTINCT t.name FROM pv_kb_tag t
                  JOIN pv_kb_entry_tag_rel r ON r.tag_id = t.id JOIN pv_kb_entry e ON e.id = r.entry_id
                 WHERE e.active""")
            return frozenset(fold_plain(w) for (name,) in self.env.cr.fetchall() for w in word_tokens(name or ""))
        return self._synonym_terms() | self._cached("tag_terms", self._index_version(), build)

    @api.model
    def _lexeme_df(self):
        """Document frequency of every lexeme in the full-text index (ts_stat): (chunks, {lexeme: n}, sorted)."""
        def build():
            self.env.cr.execute("SELECT count(*) FROM pv_kb_chunk WHERE search_tsv IS NOT NULL")
            total = self.env.cr.fetchone()[0]
            self.env.cr.execute("SELECT word, ndoc FROM ts_stat('SELECT search_tsv FROM pv_kb_chunk')")
            df = dict(self.env.cr.fetchall())
            return max(total, 1), df, sorted(df)
        return self._cached("df", self._index_version(), build)

    # --- writing the index -------------------------------------------------------
    @api.model
    def _index_chunks(self, chunk_ids=None):
        """Compute ``search_tsv`` for chunks with compound parts (lib.search.compounds) and field weights.

        A = entry id, title, tags, legal bases, topic; B = heading; D = text.
        """
        self.env.flush_all()
        self._bump_index_version()
        lexicon = self._lexicon()
        where = SQL("c.id = ANY(%s)", list(chunk_ids)) if chunk_ids is not None else SQL("TRUE")
        where = SQL("%s AND c.section_key <> %s", where, entry_card.CARD_KEY)   # a card is no passage
        self.env.cr.execute(SQL("""
            SELECT c.id, concat_ws(' ', e.kb_id, e.name, e.topic,
                       (SELECT string_agg(t.name, ' ') FROM pv_kb_entry_tag_rel r JOIN pv_kb_tag t ON t.id = r.tag_id
                         WHERE r.entry_id = e.id),
                       (SELECT string_agg(b.name, ' ') FROM pv_kb_entry_legal_basis_rel r
                          JOIN pv_kb_legal_basis b ON b.id = r.basis_id WHERE r.entry_id = e.id)),
                   coalesce(c.heading_path, ''), coalesce(c.text, '')
              FROM pv_kb_chunk c JOIN pv_kb_entry e ON e.id = c.entry_id WHERE %s""", where))
        rows = self.env.cr.fetchall()
        ids, heads, headings, bodies = [], [], [], []
        for chunk_id, head, heading, body in rows:
            ids.append(chunk_id)
            heads.append(compounds.index_text(head, lexicon))
            headings.append(compounds.index_text(heading, lexicon))
            bodies.append(compounds.index_text(body, lexicon))
        if not ids:
            return 0
        self.env.cr.execute("""
            UPDATE pv_kb_chunk c SET search_tsv =
                   setweight(to_tsvector('german', v.head), 'A')
                || setweight(to_tsvector('german', v.heading), 'B')
                || setweight(to_tsvector('german', v.body), 'D')
              FROM unnest(%s::int[], %s::text[], %s::text[], %s::text[]) AS v(id, head, heading, body)
             WHERE c.id = v.id""", [ids, heads, headings, bodies])
        return len(ids)
