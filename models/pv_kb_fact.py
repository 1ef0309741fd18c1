"""The fact table: every value of the Kernwerte (table cells, "Key: value" bullets) of the active entries, with
concept, period, basis, variant, parsed amount and the exact place in the entry. Rebuilt by the import (and on
demand by managers); nobody writes it by hand. The parsing and the comparison are ``lib/facts``.
"""
import threading
import time

from odoo import api, fields, models

from ..lib.answer.fact_answer import compose, conflicts_among
from ..lib.facts import lookup
from ..lib.facts.compare import compare, topic_common_words
from ..lib.facts.concepts import abbreviations
from ..lib.facts.extract import Fact, Source, extract_all

# facts of the whole base per database, for answering: (signature of the base, facts); renewed when an entry
# or a synonym changed (the signature), so a worker never answers from an older base than the fact table
_CACHE: dict[str, tuple[tuple, list]] = {}
_CACHE_LOCK = threading.Lock()

PERIOD_SOURCES = [("cell", "Cell"), ("row", "Row"), ("column", "Column"), ("caption", "Table caption"),
                  ("title", "Entry title"), ("stand", "Stand of the entry")]
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
    def _comparison(self):
        """The fact comparison over the whole base: (facts, pairs)."""
        facts, _ = self._extract()
        return facts, compare(facts)

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
        # the entries' content hashes (not write_date: a transaction's writes share one timestamp)
        self.env.cr.execute("""SELECT count(*), md5(string_agg(kb_id || ':' || coalesce(content_hash, '')
                                                           || ':' || coalesce(name, ''), ',' ORDER BY kb_id))
                                 FROM pv_kb_entry WHERE active
                               UNION ALL
                               SELECT count(*), md5(string_agg(term || '=' || expansions, ',' ORDER BY term))
                                 FROM pv_kb_synonym WHERE active""")
        return tuple(self.env.cr.fetchall())

    @api.model
    def _cached_facts(self):
        """The facts of the active entries, extracted once per change of the base (per process)."""
        signature = self._signature()
        with _CACHE_LOCK:
            cached = _CACHE.get(self.env.cr.dbname)
            if cached and cached[0] == signature:
                return cached[1]
        facts, _ = self._extract()
        with _CACHE_LOCK:
            _CACHE[self.env.cr.dbname] = (signature, facts)
        return facts

    @api.model
    def _answer(self, question, entry_ids):
        """The answer composed from the facts of the retrieved entries ``entry_ids`` (in their order) when the
        question asks for a value and the match is clear, else None (lib/facts/lookup.py). Only retrieved
        entries are cited, so the citation rule holds."""
        synonyms = self.env["pv.kb.synonym"].sudo()._rows()
        parsed = lookup.parse_question(question, synonyms)
        if parsed is None or not entry_ids:
            return None
        match = lookup.find(parsed, self._cached_facts(), list(entry_ids))
        return compose(match) if match else None

    @api.model
    def _conflicts(self, entry_ids):
        """The ⚠ conflicts among the entries ``entry_ids`` by the fact comparison (the whole base's topic words
        decide the subjects, as in the health check): lib.answer.types.Conflict records."""
        facts = self._cached_facts()
        wanted = set(entry_ids)
        return conflicts_among(compare([f for f in facts if f.entry_id in wanted], common=topic_common_words(facts)))
