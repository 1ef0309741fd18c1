"""Gaps of the base: the questions it could not answer well, grouped for the curator.

The grouping is ``lib/cockpit/gaps.py``; this file embeds the questions and the entries' profiles for it (through
the personal-data gate, see docs/pii.md) and stores the groups. The health run refreshes them.
"""
import datetime as dt
import hashlib
import logging
import time

import numpy as np

from odoo import api, fields, models

from ..lib.answer.respond import COMMAND_NOTICE
from ..lib.cockpit import gaps
from ..lib.llm import client as ollama, errors as ollama_errors
from ..lib.pii import gate as pii
from .pv_kb_finding import check_manager

_logger = logging.getLogger(__name__)

GAP_EMBED_SECONDS = 30.0     # time for embedding new gap questions in one run


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
    def _gap_questions(self, opts):
        """The latest gap questions of the window (``health_gap_days``), at most ``health_gap_max_questions``,
        oldest first: a scripted flood of questions makes the run no longer than the cap allows."""
        since = fields.Datetime.now() - dt.timedelta(days=max(opts["health_gap_days"], 1))
        records = self.env["pv.kb.query"].sudo().search(
            [("is_gap", "=", True), ("create_date", ">=", since)], order="id desc",
            limit=max(opts["health_gap_max_questions"], 1))
        return records.sorted("id")

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
        """Vectors of logged questions (None where the server or the personal-data gate fails), each embedded
        once (``pv.kb.gap.vector._vectors``), new ones for at most :data:`GAP_EMBED_SECONDS` per run. Each batch
        passes the personal-data gate as one request (the Ollama client sends user text only with the gate's
        mark); the log holds masked questions already."""
        Settings = self.env["pv.kb.settings"]

        def gated(batch):
            try:
                gate = Settings._pii_gate(batch[0], history=[{"role": "user", "content": t} for t in batch[1:]])
            except pii.PiiGateError as exc:
                _logger.info("pv_kb: %s gap questions left out, personal-data gate: %s", len(batch), exc)
                return None
            return [gate.question] + [turn["content"] for turn in gate.history], gate

        return self.env["pv.kb.gap.vector"].sudo()._vectors(texts, settings, seconds=GAP_EMBED_SECONDS,
                                                             what="gap questions", send=gated)

    @api.model
    def _refresh_gaps(self, opts):
        """Group the gap questions by nearest topic and by similar question; returns their number."""
        records = self._gap_questions(opts)
        if not records:
            self.search([]).write({"active": False})
            return 0
        settings = self.env["pv.kb.settings"]._get()
        rows = records.read(["question", "status", "feedback", "feedback_comment", "create_date"], load=None)
        focus = gaps.focus_texts([r["question"] for r in rows])
        vectors = self._embed_questions(focus, settings)
        questions = [gaps.LoggedQuestion(r["id"], r["question"], r["status"], r["feedback"] or "",
                                         r["feedback_comment"] or "", fields.Date.to_date(r["create_date"]), v)
                     for r, v in zip(rows, vectors)]
        references = []
        if any(v is not None for v in vectors):
            entries = self.env["pv.kb.entry"].search([])
            profile = [gaps.profile_text(e.name, e.tag_ids.mapped("name")) for e in entries]
            ref_vectors = self._embed_profiles(profile, settings)
            references = [(e.topic or "", v) for e, v in zip(entries, ref_vectors) if v]
        groups = gaps.group_by_topic(questions, references)
        groups += gaps.cluster(questions, opts["health_gap_cluster_threshold"])
        date_of = {q.query_id: q.date for q in questions}
        seen = self.browse()
        existing = {g.key: g for g in self.with_context(active_test=False).search([])}
        for group in groups:
            days = [date_of[i] for i in group.query_ids if date_of.get(i)]
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


def gap_vector_key(model, prefix, text):
    """The key a short text's embedding is stored under (a gap question, a fact's concept text): the model, the
    prefix and the text embedded."""
    return hashlib.sha256(f"{model}\x00{prefix}\x00{text}".encode("utf-8", "surrogatepass")).hexdigest()


class PvKbGapVector(models.Model):
    """Embeddings of short texts the health run compares — gap questions and the concept texts of the fact
    comparison (models/pv_kb_fact.py) — stored once (float32 bytes), so that a run asks the model server only
    for texts it has not embedded before. Written by the health run (sudo) only."""

    _name = "pv.kb.gap.vector"
    _description = "Embedding of a gap question"
    _log_access = False

    key = fields.Char(required=True, readonly=True)

    _key_uniq = models.Constraint("UNIQUE(key)", "A gap vector key is unique.")

    def init(self):
        self.env.cr.execute("ALTER TABLE pv_kb_gap_vector ADD COLUMN IF NOT EXISTS vector bytea")

    @api.model
    def _lookup(self, keys):
        """{key: float32 array} of the stored vectors among ``keys``."""
        found = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 5000):
            self.env.cr.execute("SELECT key, vector FROM pv_kb_gap_vector WHERE key = ANY(%s) AND vector IS NOT NULL",
                                [unique[start:start + 5000]])
            for key, blob in self.env.cr.fetchall():
                found[key] = np.frombuffer(bytes(blob), dtype=np.float32)
        return found

    @api.model
    def _vectors(self, texts, settings, *, seconds, what, send=None, fetch=True):
        """Vectors of ``texts`` under the configured embedding model and query prefix (None where there is none):
        the stored ones and, with ``fetch``, the others embedded now in batches and stored — for at most
        ``seconds`` (a slow model server must not push a nightly run past Odoo's time limit, which would lose the
        vectors with the run; the rest follows in the next run). ``send(batch)`` turns a batch of prefixed texts
        into (masked texts, the personal-data gate's pii.Gated) or None to leave it out (logged questions);
        without it the texts are knowledge base text (concept labels) and are sent as such. ``what`` names the texts in the log."""
        model, prefix = settings["embedding_model"], settings["query_prefix"] or ""
        keys = [gap_vector_key(model, prefix, t) for t in texts]
        known = self._lookup(keys) if keys else {}
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in known))
        if missing and fetch:
            client = self.env["pv.kb.settings"]._client(settings)
            size = max(int(settings["embed_batch_size"] or 32), 1)
            deadline = time.monotonic() + seconds
            try:
                for start in range(0, len(missing), size):
                    if time.monotonic() > deadline:
                        _logger.info("pv_kb: %s %s left for the next run (embedding time used up)",
                                     len(missing) - start, what)
                        break
                    batch = missing[start:start + size]
                    prefixed = [prefix + t for t in batch]
                    if send is None:
                        found = client.embed(model, prefixed, batch_size=len(prefixed), origin=ollama.KB_TEXT).vectors
                    else:
                        sent = send(prefixed)
                        if sent is None:
                            continue
                        masked, gated = sent
                        found = client.embed(model, masked, batch_size=len(masked), origin=gated).vectors
                    rows = [(gap_vector_key(model, prefix, t), v) for t, v in zip(batch, found) if v]
                    self._store(rows)
                    known.update((key, np.asarray(v, dtype=np.float32)) for key, v in rows)
            except ollama_errors.OllamaError as exc:
                _logger.info("pv_kb: %s without (some) embeddings: %s", what, exc)
            finally:
                client.close()
        return [known.get(k) for k in keys]

    @api.model
    def _store(self, rows):
        """Store ``[(key, vector)]`` (an existing key keeps its vector)."""
        for key, vector in rows:
            self.env.cr.execute(
                "INSERT INTO pv_kb_gap_vector (key, vector) VALUES (%s, %s) ON CONFLICT (key) DO NOTHING",
                [key, np.asarray(vector, dtype=np.float32).tobytes()])


class PvKbQuery(models.Model):
    _inherit = "pv.kb.query"

    is_gap = fields.Boolean("Gap", compute="_compute_is_gap", store=True, index=True,
                            help="Refused, unverified or rated 👎.")

    @api.depends("status", "feedback", "notice")
    def _compute_is_gap(self):
        for query in self:
            # a declined command ("Bestätige ohne Quelle, dass …") is refused, yet the base lacks nothing
            declined = query.notice == COMMAND_NOTICE
            query.is_gap = (query.status in gaps.GAP_STATUSES and not declined) or query.feedback == "down"
