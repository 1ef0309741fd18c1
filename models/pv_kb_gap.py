"""Gaps of the base: the questions it could not answer well, grouped for the curator.

The grouping is ``lib/cockpit/gaps.py``; this file embeds the questions and the entries' profiles for it (through
the personal-data gate, see docs/pii.md) and stores the groups. The health run refreshes them.
"""
import logging

from odoo import api, fields, models

from ..lib.cockpit import gaps
from ..lib.llm import client as ollama, errors as ollama_errors
from ..lib.pii import gate as pii
from .pv_kb_finding import check_manager

_logger = logging.getLogger(__name__)


class PvKbGap(models.Model):
    """A group of questions the base could not answer well (refused, unsicher, 👎)."""

    _name = "pv.kb.gap"
    _description = "Knowledge base gap"
    _order = "count desc, id"

    key = fields.Char(required=True, readonly=True, index=True)
    name = fields.Char("Group", readonly=True)
    kind = fields.Selection([("topic", "Nearest topic"), ("cluster", "Similar questions")], readonly=True,
                            required=True)
    topic = fields.Char(readonly=True)
    query_ids = fields.Many2many("pv.kb.query", "pv_kb_gap_query_rel", "gap_id", "query_id", "Questions",
                                 readonly=True)
    count = fields.Integer("Number of questions", readonly=True)
    count_refused = fields.Integer("Refused", readonly=True)
    count_unsure = fields.Integer("Unverified", readonly=True)
    count_down = fields.Integer("👎", readonly=True)
    similarity = fields.Float("Mean similarity", readonly=True, digits=(3, 3))
    first_date = fields.Date("First asked", readonly=True)
    last_date = fields.Date("Last asked", readonly=True)
    per_week = fields.Char("Per week", readonly=True)
    note = fields.Text("Entry to create", help="What entry would answer these questions (for the curator).")
    note_state = fields.Selection([("new", "New"), ("planned", "Entry planned"), ("done", "Entry created"),
                                   ("ignored", "Ignored")], "Curation", default="new", required=True)
    active = fields.Boolean(default=True, readonly=True)

    _key_uniq = models.Constraint("UNIQUE(key)", "A gap key is unique.")

    @api.model
    def _gap_questions(self):
        Query = self.env["pv.kb.query"].sudo()
        records = Query.search(["|", ("status", "in", list(gaps.GAP_STATUSES)), ("feedback", "=", "down")],
                               order="id")
        return records

    @api.model
    def _embed_profiles(self, texts, settings):
        """Vectors of the entries' profiles (knowledge base text, one batched request per batch size)."""
        if not texts:
            return []
        client = self.env["pv.kb.settings"]._client(settings)
        prefix = settings["passage_prefix"] or ""
        try:
            return client.embed(settings["embedding_model"], [prefix + t for t in texts],
                                origin=ollama.KB_TEXT).vectors
        except ollama_errors.OllamaError as exc:
            _logger.info("pv_kb: gap grouping without topic profiles: %s", exc)
            return [None] * len(texts)
        finally:
            client.close()

    @api.model
    def _embed_questions(self, texts, settings):
        """Vectors of logged questions (None where the server or the personal-data gate fails).

        The log holds masked questions already; each still passes the gate again, one request per
        question, because the Ollama client sends user text only with that request's gate mark.
        """
        vectors = [None] * len(texts)
        if not texts:
            return vectors
        Settings = self.env["pv.kb.settings"]
        client = Settings._client(settings)
        prefix = settings["query_prefix"] or ""
        try:
            for pos, text in enumerate(texts):
                try:
                    gated = Settings._pii_gate(text)
                except pii.PiiGateError as exc:
                    _logger.info("pv_kb: gap question %s left out, personal-data gate: %s", pos, exc)
                    continue
                vectors[pos] = client.embed(settings["embedding_model"], [prefix + gated.question],
                                            batch_size=1, origin=gated).vectors[0]
        except ollama_errors.OllamaError as exc:
            _logger.info("pv_kb: gap grouping without question embeddings: %s", exc)
        finally:
            client.close()
        return vectors

    @api.model
    def _refresh_gaps(self, opts):
        """Group the gap questions by nearest topic and by similar question; returns their number."""
        records = self._gap_questions()
        if not records:
            self.search([]).write({"active": False})
            return 0
        settings = self.env["pv.kb.settings"]._get()
        focus = gaps.focus_texts(records.mapped("question"))
        vectors = self._embed_questions(focus, settings)
        questions = [gaps.LoggedQuestion(q.id, q.question, q.status, q.feedback or "", q.feedback_comment or "",
                                         fields.Date.to_date(q.create_date), v)
                     for q, v in zip(records, vectors)]
        references = []
        if any(vectors):
            entries = self.env["pv.kb.entry"].search([])
            profile = [gaps.profile_text(e.name, e.tag_ids.mapped("name")) for e in entries]
            ref_vectors = self._embed_profiles(profile, settings)
            references = [(e.topic or "", v) for e, v in zip(entries, ref_vectors) if v]
        groups = gaps.group_by_topic(questions, references)
        groups += gaps.cluster(questions, opts["health_gap_cluster_threshold"])
        seen = self.browse()
        existing = {g.key: g for g in self.with_context(active_test=False).search([])}
        for group in groups:
            days = [q.date for q in questions if q.query_id in set(group.query_ids) and q.date]
            vals = {"name": group.label, "kind": group.kind, "topic": group.key.split(":", 1)[1]
                    if group.kind == "topic" else False, "query_ids": [fields.Command.set(group.query_ids)],
                    "count": len(group.query_ids), "count_refused": group.refused, "count_unsure": group.unsure,
                    "count_down": group.thumbs_down, "similarity": group.similarity,
                    "first_date": min(days) if days else False, "last_date": max(days) if days else False,
                    "per_week": ", ".join(f"{w}: {n}" for w, n in sorted(group.per_week.items())), "active": True}
            record = existing.get(group.key)
            if record:
                record.write(vals)
            else:
                record = self.create(dict(vals, key=group.key))
            seen |= record
        (self.with_context(active_test=False).search([]) - seen).write({"active": False})
        return len(records)

    def action_open_questions(self):
        self.ensure_one()
        return {
            "type": "ir.actions.act_window",
            "name": self.name,
            "res_model": "pv.kb.query",
            "view_mode": "list,form",
            "domain": [("id", "in", self.query_ids.ids)],
        }

    def action_plan_entry(self):
        """"Eintrag anlegen": the curator marks the gap as planned (the note says what the entry needs)."""
        check_manager(self.env)
        self.write({"note_state": "planned"})
        return True

    def action_mark_done(self):
        check_manager(self.env)
        self.write({"note_state": "done"})
        return True


class PvKbQuery(models.Model):
    _inherit = "pv.kb.query"

    is_gap = fields.Boolean("Gap", compute="_compute_is_gap", store=True, index=True,
                            help="Refused, unverified or rated 👎.")

    @api.depends("status", "feedback")
    def _compute_is_gap(self):
        for query in self:
            query.is_gap = query.status in gaps.GAP_STATUSES or query.feedback == "down"
