"""The fact table: every value of the Kernwerte (table cells, "Key: value" bullets, value sentences) of the active
entries, with concept, period, basis, variant, parsed amount and the exact place in the entry. Rebuilt by the
import (and on demand by managers); nobody writes it by hand. The parsing and the comparison are ``lib/facts``;
the comparison's near matches by embedding get their vectors here (:meth:`PvKbFact._concept_embedder`).
"""
import logging
import threading
import time
from dataclasses import dataclass


from odoo import api, fields, models

from ..lib.answer import payments
from ..lib.answer.fact_answer import compose, conflicts_among
from ..lib.facts import lookup, shortlist
from ..lib.facts.compare import EMBED_THRESHOLD, compare
from ..lib.facts.concepts import abbreviations, synonym_links
from ..lib.facts.extract import Fact, Source, extract_all

_logger = logging.getLogger(__name__)

CONCEPT_EMBED_SECONDS = 20.0    # time for embedding new concept texts in one health run


@dataclass
class _Base:
    """What answering needs of the whole base, per database and process: renewed when an entry or a synonym
    changed (the signature), so a worker never answers from an older base than the fact table."""

    signature: tuple
    facts: list
    synonyms: list                               # (term, expansions) rows of the synonym table
    index: shortlist.FactIndex | None = None     # built on first use (lib/facts/shortlist.py)
    links: frozenset | None = None                # the synonym table's word pairs (concepts.synonym_links)
    valued: frozenset | None = None               # the words the base gives values for (lib/answer/payments)
    titled: frozenset = frozenset()               # the words of its titles, tags and headings
    units: dict | None = None                     # the units each word of a fact label is valued in


_CACHE: dict[str, _Base] = {}
_CACHE_LOCK = threading.Lock()


@dataclass
class Shortlist:
    """A value question over the whole base (``_shortlist``): the parsed question, the facts that may answer
    it, the base's index for the other sides (lib/facts/shortlist.partners) and the comparison's near-match
    arguments (``PvKbFact._embedding_options``)."""

    question: lookup.Question
    facts: list
    index: shortlist.FactIndex
    near: dict

    @property
    def entry_ids(self):
        return shortlist.entry_ids(self.facts)

    def partners(self, found):
        """The entries that contradict the facts of the entries ``found``."""
        wanted = set(found)
        return shortlist.partners([f for f in self.facts if f.entry_id in wanted], self.index,
                                  self.near.get("embed"), self.near.get("embed_threshold", EMBED_THRESHOLD))

    def answer(self, entry_ids):
        """As ``pv.kb.fact._answer(question, entry_ids)``, without parsing the question again."""
        match = lookup.find(self.question, self.index.facts, list(entry_ids), **self.near) if entry_ids else None
        return compose(match) if match else None

PERIOD_SOURCES = [("cell", "Cell"), ("row", "Row"), ("column", "Column"), ("caption", "Table caption"),
                  ("title", "Entry title"), ("stand", "Stand of the entry"), ("sentence", "Sentence")]
BASES = [("monatlich", "monthly"), ("täglich", "daily"), ("jährlich", "yearly"), ("wöchentlich", "weekly")]
ORIGINS = [("table", "Table cell"), ("bullet", "Bullet"), ("sentence", "Sentence")]


class PvKbFact(models.Model):
    """One value of one entry, as the fact table holds it."""

    _name = "pv.kb.fact"
    _description = "Knowledge base fact (a value of the Kernwerte)"
    _order = "topic, concept, year desc, kb_id, line"
    _rec_name = "concept"

    entry_id = fields.Many2one("pv.kb.entry", "Entry", required=True, index=True, ondelete="cascade", readonly=True)
    kb_id = fields.Char("Entry ID", index=True, readonly=True)
    topic = fields.Char("Topic", index=True, readonly=True)
    stand = fields.Char("Stand", readonly=True)
    concept = fields.Char("Concept", index=True, readonly=True, help="What the value measures (label, column).")
    concept_key = fields.Char("Concept key", index=True, readonly=True,
                              help="Folded, stemmed words of the concept without years, basis and numbers.")
    label = fields.Char("Row label", readonly=True)
    column_header = fields.Char("Column", readonly=True)
    caption = fields.Char("Section", readonly=True)
    period = fields.Char("Year / period", index=True, readonly=True, help="As read: 2025, ab 2026, bis 2024, …")
    year = fields.Integer("Year", index=True, readonly=True, aggregator=False,
                          help="The latest year the period names (the Stand's year when it names none).")
    year_from = fields.Integer("From year", readonly=True, aggregator=False)
    year_to = fields.Integer("To year", readonly=True, aggregator=False)
    period_source = fields.Selection(PERIOD_SOURCES, "Year from", readonly=True)
    has_year = fields.Boolean("Names a year", readonly=True, index=True)
    basis = fields.Selection(BASES, "Basis", readonly=True)
    variant = fields.Char("Variant", readonly=True, help="Numbers of the label: thresholds, ranges, counts.")
    value_text = fields.Char("Value (as written)", readonly=True)
    amount = fields.Float("Amount", readonly=True, digits=(16, 4), aggregator="max")
    amount_to = fields.Float("Amount to", readonly=True, digits=(16, 4), aggregator="max")
    unit = fields.Char("Unit", index=True, readonly=True)
    bound = fields.Char("Bound", readonly=True)
    is_reference = fields.Boolean("Reference", readonly=True, help="Points to another entry instead of a value.")
    origin = fields.Selection(ORIGINS, readonly=True)
    section = fields.Char("Section key", readonly=True)
    line = fields.Integer("Line", readonly=True, aggregator=False)
    table_no = fields.Integer("Table", readonly=True, aggregator=False)
    row_no = fields.Integer("Row", readonly=True, aggregator=False)
    column_no = fields.Integer("Column no.", readonly=True, aggregator=False)
    passage = fields.Char("Passage", readonly=True, help="The table row or bullet as written (highlighted).")

    @api.model
    def _sources(self, entries=None):
        entries = entries if entries is not None else self.env["pv.kb.entry"].sudo().search([])
        return [Source(e.kb_id, e.name or "", e.stand or "", e.topic or "", e.body_md or "",
                       e.tag_ids.mapped("name"), e.legal_basis_ids.mapped("name")) for e in entries], entries

    @api.model
    def _abbreviations(self):
        return abbreviations(self.env["pv.kb.synonym"].sudo()._rows())

    @api.model
    def _extract(self, entries=None):
        """(facts, {kb_id: entry record}) of the active entries (or of ``entries``)."""
        sources, records = self._sources(entries)
        return extract_all(sources, self._abbreviations()), {e.kb_id: e for e in records}

    @api.model
    def _comparison(self, fetch=False):
        """The fact comparison over the whole base: (facts, pairs); ``fetch``: embed concept texts not stored yet."""
        facts = self._cached_facts()
        return facts, compare(facts, **self._embedding_options(fetch=fetch))

    @api.model
    def _embedding_options(self, fetch=False, settings=None, base=None):
        """The comparison's near-match arguments: the embedder, the threshold (setting
        ``health_concept_similarity``; 0 switches the near matches off) and the synonym table's word pairs
        (``base``: of the cached base, :meth:`_base`, kept with it)."""
        settings = settings or self.env["pv.kb.settings"]._get()
        threshold = settings["health_concept_similarity"]
        if not threshold:
            return {}
        if base is None:
            links = synonym_links(self.env["pv.kb.synonym"].sudo()._rows())
        else:
            if base.links is None:
                base.links = synonym_links(base.synonyms)
            links = base.links
        return {"embed": self._concept_embedder(settings, fetch=fetch), "embed_threshold": threshold, "links": links}

    @api.model
    def _concept_embedder(self, settings, fetch=False):
        """Concept texts → vectors of the configured embedding model, for lib/facts/compare's near matches.

        Each text is embedded once and stored with the gap questions' vectors (``pv.kb.gap.vector``, keyed by
        model, prefix and text), so a check re-embeds nothing unchanged. With ``fetch`` the texts not stored yet
        are embedded, for at most :data:`CONCEPT_EMBED_SECONDS` (the rest in the next run); without it (answers,
        the check after an import) only the stored vectors are used. A model server that does not answer leaves
        the texts without vector: the comparison then keeps to the word rules for them.
        """
        Vectors = self.env["pv.kb.gap.vector"].sudo()

        def embed(texts):
            return Vectors._vectors(list(texts), settings, seconds=CONCEPT_EMBED_SECONDS, what="concept texts",
                                    fetch=fetch)

        return embed

    @api.model
    def _vals(self, fact: Fact, entry_db_id: int) -> dict:
        period = fact.period
        return {
            "entry_id": entry_db_id, "kb_id": fact.entry_id, "topic": fact.topic, "stand": fact.stand,
            "concept": fact.concept[:250], "concept_key": " ".join(sorted(fact.key))[:250], "label": fact.label[:250],
            "column_header": fact.column_header[:250], "caption": fact.caption[:250],
            "period": period.label() or False, "year": period.newest or 0,
            "year_from": period.start or 0, "year_to": period.end or 0, "period_source": period.source,
            "has_year": period.explicit, "basis": fact.basis or False, "variant": fact.variant or False,
            "value_text": fact.text[:250], "unit": fact.value.unit or False, "bound": fact.value.bound or False,
            "amount": float(fact.value.amount) if fact.value.amount is not None else 0.0,
            "amount_to": float(fact.value.amount_to) if fact.value.amount_to is not None else 0.0,
            "is_reference": fact.is_reference, "origin": fact.origin, "section": fact.section, "line": fact.line,
            "table_no": fact.table, "row_no": fact.row, "column_no": fact.column, "passage": fact.passage[:500],
        }

    @api.model
    def _rebuild(self):
        """Replace the whole table with the facts of the active entries (the import calls this)."""
        started = time.monotonic()
        facts, records = self._extract()
        sudo = self.sudo()
        self.env.cr.execute("DELETE FROM pv_kb_fact")
        sudo.invalidate_model()
        sudo.create([self._vals(f, records[f.entry_id].id) for f in facts if f.entry_id in records])
        return {"facts": len(facts), "seconds": round(time.monotonic() - started, 3)}

    def action_rebuild(self):
        """Button for KB managers: rebuild the table from the entries as they are."""
        from .pv_kb_finding import check_manager
        check_manager(self.env)
        self._rebuild()
        return {"type": "ir.actions.client", "tag": "reload"}

    @api.model
    def _signature(self):
        # the entries' content hashes (not write_date: a transaction's writes share one timestamp), summed as
        # 64-bit hashes: no sort and no long string per question
        self.env.cr.execute("""SELECT count(*), sum(hashtextextended(kb_id || ':' || coalesce(content_hash, '')
                                                                || ':' || coalesce(name, ''), 0))
                                 FROM pv_kb_entry WHERE active
                               UNION ALL
                               SELECT count(*), sum(hashtextextended(term || '=' || expansions, 0))
                                 FROM pv_kb_synonym WHERE active""")
        return tuple(self.env.cr.fetchall())

    @api.model
    def _base(self):
        """The facts of the active entries and the synonym rows, read once per change of the base (per process)."""
        self.env["pv.kb.entry"].flush_model(["active", "content_hash", "name"])
        self.env["pv.kb.synonym"].flush_model(["active", "term", "expansions"])
        signature = self._signature()
        with _CACHE_LOCK:
            cached = _CACHE.get(self.env.cr.dbname)
            if cached and cached.signature == signature:
                return cached
        facts, _ = self._extract()
        base = _Base(signature, facts, self.env["pv.kb.synonym"].sudo()._rows())
        with _CACHE_LOCK:
            _CACHE[self.env.cr.dbname] = base
        return base

    @api.model
    def _cached_facts(self):
        """The facts of the active entries, extracted once per change of the base (per process)."""
        return self._base().facts

    @api.model
    def _answer(self, question, entry_ids):
        """The answer composed from the facts of the retrieved entries ``entry_ids`` (in their order) when the
        question asks for a value and the match is clear, else None (lib/facts/lookup.py). Only retrieved
        entries are cited, so the citation rule holds."""
        base = self._base()
        parsed = lookup.parse_question(question, base.synonyms)
        if parsed is None or not entry_ids:
            return None
        match = lookup.find(parsed, base.facts, list(entry_ids), **self._embedding_options(base=base))
        return compose(match) if match else None

    @api.model
    def _valued_words(self):
        """The words the active base gives values for (lib/answer/payments.valued_words): its entries' titles,
        tags and headings, its facts' labels, column headers and captions; once per change of the base."""
        base = self._payment_words()
        return base.valued

    @api.model
    def _levy_units(self):
        """(units by label word, title words) of the active base for lib/answer/payments.unrated_levy."""
        base = self._payment_words()
        return base.units, base.titled

    @api.model
    def _payment_words(self):
        base = self._base()
        if base.valued is None:
            self.env.cr.execute("""
                SELECT e.name FROM pv_kb_entry e WHERE e.active
                 UNION ALL
                SELECT t.name FROM pv_kb_tag t JOIN pv_kb_entry_tag_rel r ON r.tag_id = t.id
                  JOIN pv_kb_entry e ON e.id = r.entry_id WHERE e.active
                 UNION ALL
                SELECT c.heading_path FROM pv_kb_chunk c JOIN pv_kb_entry e ON e.id = c.entry_id WHERE e.active""")
            titles = [text for (text,) in self.env.cr.fetchall()]
            labels = [(text, f.value.unit) for f in base.facts for text in (f.label, f.column_header, f.caption)]
            base.titled = payments.valued_words(titles, ())
            base.units = payments.label_units(labels)
            base.valued = payments.valued_words(titles, (text for text, _unit in labels))   # set last: the flag
        return base

    @api.model
    def _shortlist(self, question):
        """The value question ``question`` over the facts of the whole base (lib/facts/shortlist.py): a
        :class:`Shortlist`, or None when it asks for no value or no fact may answer it."""
        base = self._base()
        parsed = lookup.parse_question(question, base.synonyms)
        if parsed is None:
            return None
        fact_index = self._index(base)
        facts = shortlist.candidates(parsed, fact_index)
        return Shortlist(parsed, facts, fact_index, self._embedding_options(base=base)) if facts else None

    @api.model
    def _index(self, base=None):
        """The index of the base's facts (lib/facts/shortlist.index), built once per base."""
        base = base or self._base()
        if base.index is None:
            base.index = shortlist.index(base.facts)    # a race builds the same index twice, harmlessly
        return base.index

    @api.model
    def _conflicts(self, entry_ids, outdated=False):
        """The ⚠ conflicts among the entries ``entry_ids`` by the fact comparison (the whole base's topic words
        decide the subjects, as in the health check): lib.answer.types.Conflict records; ``outdated``: also the
        values of earlier years a newer entry replaced (``Conflict.outdated``)."""
        fact_index = self._index()
        wanted = set(entry_ids)
        return conflicts_among(compare([f for f in fact_index.facts if f.entry_id in wanted], common=fact_index.common,
                                       **self._embedding_options()), outdated=outdated)
