"""The curator's cockpit: health check of the whole base, gaps from the question log, related entries.

The logic lives in ``lib/health.py`` and ``lib/gaps.py``; this file reads the data for them (SQL where
the amount of data asks for it), stores what they find and offers it to KB managers.
"""
import datetime as dt
import json
import logging
import time

from odoo import api, fields, models
from odoo.exceptions import AccessError


from ..lib import gaps, health, ollama, ollama_errors, pii
from ..lib.answer.conflicts import detect_conflicts
from ..lib.answer.types import EntryFacts

_logger = logging.getLogger(__name__)

KINDS = [
    ("conflict", "Conflict"),
    ("stale", "Outdated"),
    ("dangling_ref", "Dangling reference"),
    ("oneway_ref", "One-way reference"),
    ("near_duplicate", "Near-duplicate"),
    ("embedding", "Embedding"),
    ("unretrieved", "Never retrieved"),
]
SEVERITIES = [("high", "High"), ("medium", "Medium"), ("low", "Low"), ("info", "Note")]
FINDING_STATES = [("open", "Open"), ("accepted", "Accepted"), ("resolved", "Resolved")]
TRIGGERS = [("cron", "Scheduled"), ("import", "After import"), ("manual", "Manual")]

# key -> (default, type); stored as "pv_kb.<key>"
HEALTH_DEFAULTS = {
    "health_max_age_months": (36, int),
    "health_duplicate_threshold": (0.95, float),
    "health_unretrieved_days": (90, int),
    "health_unretrieved_min_questions": (50, int),
    "health_embedding_grace_minutes": (60, int),
    "health_gap_cluster_threshold": (0.8, float),
}
DUPLICATE_NEIGHBOURS = 8   # nearest chunks looked at per entry summary (HNSW, ef_search 100)


def _check_manager(env):
    if not env.user.has_group("pv_kb.group_pv_kb_manager"):
        raise AccessError(env._("Only knowledge base managers can do this."))


class PvKbHealthRun(models.Model):
    """One run of the health check: when, how long, what it found."""

    _name = "pv.kb.health.run"
    _description = "Knowledge base health run"
    _order = "id desc"

    date = fields.Datetime(readonly=True, default=fields.Datetime.now)
    trigger = fields.Selection(TRIGGERS, readonly=True, required=True, default="manual")
    batch_id = fields.Many2one("pv.kb.batch", "Import", readonly=True, ondelete="set null")
    user_id = fields.Many2one("res.users", "Started by", readonly=True, default=lambda self: self.env.user)
    duration = fields.Float("Duration (s)", readonly=True, digits=(16, 2))
    count_entries = fields.Integer("Entries checked", readonly=True)
    count_open = fields.Integer("Open findings", readonly=True)
    count_opened = fields.Integer("New findings", readonly=True)
    count_resolved = fields.Integer("Resolved findings", readonly=True)
    count_gap_questions = fields.Integer("Gap questions", readonly=True)
    timings = fields.Char("Timings (ms)", readonly=True)

    @api.depends("date", "trigger")
    def _compute_display_name(self):
        labels = dict(self._fields["trigger"]._description_selection(self.env))
        for run in self:
            run.display_name = f"{fields.Datetime.to_string(run.date) or ''} ({labels.get(run.trigger, '')})"

    # --- settings ------------------------------------------------------------
    @api.model
    def _options(self):
        params = self.env["ir.config_parameter"].sudo()
        values = {}
        for key, (default, kind) in HEALTH_DEFAULTS.items():
            try:
                values[key] = kind(params.get_param(f"pv_kb.{key}", default))
            except (TypeError, ValueError):
                values[key] = default
        return values

    # --- reading the base ----------------------------------------------------
    @api.model
    def _entry_infos(self):
        cr = self.env.cr
        self.env["pv.kb.entry"].flush_model()
        self.env["pv.kb.chunk"].flush_model(["entry_id", "section_key", "text", "position"])
        cr.execute("""
            SELECT e.id, e.kb_id, e.name, coalesce(e.topic, ''), coalesce(e.stand, ''), coalesce(e.cross_refs, ''),
                   coalesce((SELECT array_agg(b.name ORDER BY b.name) FROM pv_kb_entry_legal_basis_rel r
                              JOIN pv_kb_legal_basis b ON b.id = r.basis_id WHERE r.entry_id = e.id), '{}'),
                   coalesce((SELECT string_agg(c.text, E'\n' ORDER BY c.position) FROM pv_kb_chunk c
                              WHERE c.entry_id = e.id AND c.section_key = 'kernwerte'), '')
              FROM pv_kb_entry e WHERE e.active ORDER BY e.kb_id
        """)
        db_ids, infos = {}, []
        for db_id, kb_id, name, topic, stand, refs, bases, kern in cr.fetchall():
            db_ids[kb_id] = db_id
            infos.append(health.EntryInfo(kb_id, name or "", topic, stand, list(bases),
                                          [r for r in refs.split(",") if r], kern))
        return infos, db_ids

    @api.model
    def _duplicate_pairs(self):
        """(a, b, similarity) for each entry's summary and its nearest summaries of other entries.

        The entry cards (lib/entry_card.py) are left out of the neighbours: an entry's own card, next to
        its summary, would take one of the few places.

        One index query per summary chunk (``ORDER BY embedding <=> v LIMIT n`` on the chunk table, so
        the HNSW index serves it), not all pairs in Python.
        """
        cr = self.env.cr
        cr.execute("SET LOCAL hnsw.ef_search = 100")
        cr.execute("""
            SELECT DISTINCT ON (c.entry_id) c.id, c.kb_id, c.embedding::text FROM pv_kb_chunk c
              JOIN pv_kb_entry e ON e.id = c.entry_id
             WHERE e.active AND c.section_key = 'zusammenfassung' AND c.embedding IS NOT NULL
             ORDER BY c.entry_id, c.position
        """)
        summaries = cr.fetchall()
        pairs = []
        for _chunk_id, kb_id, vector in summaries:
            cr.execute("""
                SELECT kb_id, section_key, 1 - (embedding <=> %(v)s::vector) FROM pv_kb_chunk
                 WHERE embedding IS NOT NULL AND entry_active AND section_key <> 'card'
                 ORDER BY embedding <=> %(v)s::vector LIMIT %(n)s
            """, {"v": vector, "n": DUPLICATE_NEIGHBOURS})
            for other, section, similarity in cr.fetchall():
                if other != kb_id and section == "zusammenfassung":
                    pairs.append((kb_id, other, float(similarity)))
        return pairs, len(summaries)

    @api.model
    def _embedding_infos(self, grace_minutes):
        """Embedding state per entry; empty while nothing in the base is embedded (no model set up yet:
        that is one state of the product, not a finding per entry)."""
        cr = self.env.cr
        cr.execute("SELECT 1 FROM pv_kb_chunk WHERE embedding IS NOT NULL LIMIT 1")
        if not cr.fetchone():
            return []
        limit = fields.Datetime.now() - dt.timedelta(minutes=grace_minutes)
        # sections the model server rejected (the embedding job keeps their error, models/pv_kb_chunk_embed.py)
        cr.execute("""
            SELECT e.kb_id, count(c.id), count(c.embedding),
                   array_agg(coalesce(nullif(c.heading_path, ''), c.section_key) ORDER BY c.position)
                       FILTER (WHERE c.embedding_error IS NOT NULL),
                   array_agg(coalesce(nullif(c.heading_path, ''), c.section_key) ORDER BY c.position)
                       FILTER (WHERE c.embedding_cut AND c.embedding IS NOT NULL)
              FROM pv_kb_entry e JOIN pv_kb_chunk c ON c.entry_id = e.id AND c.section_key <> 'card'
             WHERE e.active AND e.write_date <= %s
             GROUP BY e.kb_id
        """, [limit])
        return [health.EmbeddingInfo(kb_id, total, done, failed=failed or [], cut=cut or [])
                for kb_id, total, done, failed, cut in cr.fetchall()]

    @api.model
    def _retrieved_since(self, days):
        cr = self.env.cr
        self.env["pv.kb.query"].flush_model(["retrieved_ids"])
        since = fields.Datetime.now() - dt.timedelta(days=days)
        cr.execute("SELECT count(*) FROM pv_kb_query WHERE create_date >= %s", [since])
        questions = cr.fetchone()[0]
        cr.execute("""
            SELECT DISTINCT trim(x) FROM pv_kb_query q, unnest(string_to_array(q.retrieved_ids, ',')) AS x
             WHERE q.create_date >= %s AND q.retrieved_ids IS NOT NULL
        """, [since])
        return {row[0] for row in cr.fetchall()}, questions

    # --- the check -----------------------------------------------------------
    @api.model
    def _run_health_check(self, trigger="manual", batch=None, today=None):
        """Check the whole base, store the findings (update by key, resolve what is gone), group the gaps."""
        started = time.monotonic()
        timings = {}
        opts = self._options()

        def lap(name, since):
            timings[name] = round((time.monotonic() - since) * 1000)
            return time.monotonic()

        t = time.monotonic()
        infos, db_ids = self._entry_infos()
        t = lap("read", t)
        pairs, _count = self._duplicate_pairs()
        t = lap("near_duplicates", t)
        embeddings = self._embedding_infos(opts["health_embedding_grace_minutes"])
        retrieved, questions = self._retrieved_since(opts["health_unretrieved_days"])
        self.env.cr.execute("SELECT kb_id FROM pv_kb_entry")
        known = {row[0] for row in self.env.cr.fetchall()}   # archived ids count as known: not dangling
        t = lap("read_more", t)

        def detect(entries):
            return detect_conflicts([EntryFacts(
                e.entry_id, e.title, e.stand, e.topic, e.legal_bases, e.kernwerte_text) for e in entries])

        found = health.run_checks(
            infos, detect=detect, known_ids=known, duplicate_pairs=pairs, embeddings=embeddings,
            retrieved=retrieved, questions=questions, days=opts["health_unretrieved_days"],
            options=health.Options(max_age_months=opts["health_max_age_months"],
                                   near_duplicate_threshold=opts["health_duplicate_threshold"],
                                   unretrieved_min_questions=opts["health_unretrieved_min_questions"],
                                   today=today))
        t = lap("checks", t)
        run = self.create({"trigger": trigger, "batch_id": batch.id if batch else False,
                           "count_entries": len(infos)})
        opened, resolved = self.env["pv.kb.finding"]._store(found, db_ids, run, batch)
        t = lap("store", t)
        gap_questions = 0
        if trigger != "import":   # an import does not change the log (and must not wait for the model server)
            try:
                with self.env.cr.savepoint():
                    gap_questions = self.env["pv.kb.gap"]._refresh_gaps(opts)
            except Exception:  # noqa: BLE001 - the findings stand; the gap groups wait for the next run
                _logger.exception("pv_kb: grouping the gaps of the question log failed")
            lap("gaps", t)
        run.write({
            "duration": time.monotonic() - started,
            "count_open": self.env["pv.kb.finding"].search_count([("state", "=", "open")]),
            "count_opened": opened, "count_resolved": resolved, "count_gap_questions": gap_questions,
            "timings": json.dumps(timings),
        })
        _logger.info("pv_kb: health check (%s) of %d entries in %.2f s: %d findings, %d new, %d resolved",
                     trigger, len(infos), run.duration, len(found), opened, resolved)
        return run

    @api.model
    def _cron_health_check(self):
        self._run_health_check(trigger="cron")

    @api.model
    def _after_import(self, batch):
        """Called by the importer after an applied batch; a failing check never undoes the import."""
        try:
            with self.env.cr.savepoint():
                return self._run_health_check(trigger="import", batch=batch)
        except Exception:  # noqa: BLE001 - the import is done; the nightly run tries again
            _logger.exception("pv_kb: health check after import %s failed", batch.name)
            return self.browse()

    def action_run_now(self):
        _check_manager(self.env)
        run = self.sudo()._run_health_check(trigger="manual")
        return {
            "type": "ir.actions.client",
            "tag": "display_notification",
            "params": {
                "title": self.env._("Health check done"),
                "message": self.env._("%(entries)s entries checked in %(seconds)s s: %(open)s open findings, "
                                      "%(new)s new, %(resolved)s resolved.", entries=run.count_entries,
                                      seconds=f"{run.duration:.1f}", open=run.count_open, new=run.count_opened,
                                      resolved=run.count_resolved),
                "type": "success",
                "next": {"type": "ir.actions.client", "tag": "soft_reload"},
            },
        }

    # --- dashboard -----------------------------------------------------------
    def action_dashboard_data(self):
        """Numbers for the Übersicht (KB managers only)."""
        _check_manager(self.env)
        return self.sudo()._dashboard_data()

    @api.model
    def _dashboard_data(self, days=30):
        cr = self.env.cr
        self.env.flush_all()
        Finding = self.env["pv.kb.finding"]
        kinds = dict(KINDS)
        severities = dict(SEVERITIES)
        # the selections' labels in the user's language
        labels_kind = dict(Finding._fields["kind"]._description_selection(self.env))
        labels_sev = dict(Finding._fields["severity"]._description_selection(self.env))
        cr.execute("SELECT kind, severity, count(*) FROM pv_kb_finding WHERE state = 'open' GROUP BY 1, 2")
        by_kind: dict[str, dict] = {}
        for kind, severity, count in cr.fetchall():
            row = by_kind.setdefault(kind, {"kind": kind, "label": labels_kind.get(kind, kind), "total": 0})
            row[severity] = count
            row["total"] += count
        kind_rows = [by_kind[k] for k in kinds if k in by_kind]
        cr.execute("SELECT severity, count(*) FROM pv_kb_finding WHERE state = 'open' GROUP BY 1")
        sev = dict(cr.fetchall())
        since = fields.Datetime.now() - dt.timedelta(days=days)
        cr.execute("SELECT status, count(*) FROM pv_kb_query WHERE create_date >= %s GROUP BY 1", [since])
        status_counts = dict(cr.fetchall())
        # 👎 and refusal rate per topic: the topic of the first retrieved entry (refusals without one: "–")
        cr.execute("""
            SELECT coalesce(e.topic, '–'), count(*),
                   count(*) FILTER (WHERE q.status = 'verweigert'), count(*) FILTER (WHERE q.feedback = 'down')
              FROM pv_kb_query q
              LEFT JOIN pv_kb_entry e ON e.kb_id = trim(split_part(q.retrieved_ids, ',', 1))
             WHERE q.create_date >= %s GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 15
        """, [since])
        topics = [{"topic": t, "questions": n, "refused": r, "down": d,
                   "refusal_rate": round(r / n, 3) if n else 0, "down_rate": round(d / n, 3) if n else 0}
                  for t, n, r, d in cr.fetchall()]
        cr.execute("""
            SELECT count(*), count(c.embedding), count(DISTINCT c.entry_id),
                   count(DISTINCT c.entry_id) FILTER (WHERE c.embedding IS NOT NULL)
              FROM pv_kb_chunk c JOIN pv_kb_entry e ON e.id = c.entry_id WHERE e.active
        """)
        chunks, embedded, entries, entries_embedded = cr.fetchone()
        batch = self.env["pv.kb.batch"].search([], limit=1)
        run = self.search([], limit=1)
        states = dict(self.env["pv.kb.query"]._fields["status"]._description_selection(self.env))
        return {
            "findings_by_kind": kind_rows,
            "severity_labels": labels_sev,
            "open_by_severity": {k: sev.get(k, 0) for k in severities},
            "open_total": sum(sev.values()),
            "gaps_open": self.env["pv.kb.gap"].search_count([("note_state", "!=", "done"), ("kind", "=", "topic")]),
            "answers": [{"status": k, "label": states.get(k, k), "count": status_counts.get(k, 0)} for k in states],
            "answers_total": sum(status_counts.values()),
            "days": days,
            "topics": topics,
            "embedding": {"chunks": chunks, "embedded": embedded, "entries": entries,
                          "entries_embedded": entries_embedded,
                          "share": round(embedded / chunks, 3) if chunks else 0},
            "last_import": batch and {"id": batch.id, "name": batch.name, "state": batch.state,
                                      "date": fields.Datetime.to_string(batch.date)},
            "last_run": run and {"id": run.id, "date": fields.Datetime.to_string(run.date),
                                 "duration": round(run.duration, 2), "open": run.count_open,
                                 "opened": run.count_opened, "resolved": run.count_resolved,
                                 "entries": run.count_entries},
        }


class PvKbFinding(models.Model):
    """Something the curator should look at, found by the health check."""

    _name = "pv.kb.finding"
    _description = "Knowledge base finding"
    _order = "state_rank, severity_rank, kind, id"

    name = fields.Char(compute="_compute_name", store=True)
    key = fields.Char(required=True, readonly=True, index=True, help="Stable key: a re-run updates this finding.")
    kind = fields.Selection(KINDS, required=True, readonly=True, index=True)
    severity = fields.Selection(SEVERITIES, required=True, readonly=True, index=True)
    severity_rank = fields.Integer(compute="_compute_ranks", store=True)
    state_rank = fields.Integer(compute="_compute_ranks", store=True)
    entry_ids = fields.Many2many("pv.kb.entry", "pv_kb_finding_entry_rel", "finding_id", "entry_id", "Entries",
                                 readonly=True)
    entry_refs = fields.Char("Entry IDs", readonly=True, help="The ids as found (also when an entry is gone).")
    message = fields.Text("Explanation", readonly=True)
    state = fields.Selection(FINDING_STATES, required=True, readonly=True, default="open", index=True)
    first_seen = fields.Datetime("First seen", readonly=True)
    last_seen = fields.Datetime("Last seen", readonly=True)
    opened_batch_id = fields.Many2one("pv.kb.batch", "Opened by import", readonly=True, ondelete="set null")
    resolved_batch_id = fields.Many2one("pv.kb.batch", "Resolved by import", readonly=True, ondelete="set null")
    resolved_by = fields.Many2one("res.users", "Resolved by", readonly=True)
    resolved_at = fields.Datetime("Resolved at", readonly=True)
    accepted_by = fields.Many2one("res.users", "Accepted by", readonly=True)
    run_id = fields.Many2one("pv.kb.health.run", "Last run", readonly=True, ondelete="set null")
    note = fields.Text("Curator note")

    _key_uniq = models.Constraint("UNIQUE(key)", "A finding key is unique.")

    @api.depends("kind", "entry_refs")
    def _compute_name(self):
        labels = dict(self._fields["kind"]._description_selection(self.env))
        for finding in self:
            finding.name = f"{labels.get(finding.kind, finding.kind)}: {finding.entry_refs or ''}"

    @api.depends("severity", "state")
    def _compute_ranks(self):
        states = [s for s, _ in FINDING_STATES]
        for finding in self:
            finding.severity_rank = health.SEVERITY_RANK.get(finding.severity, 9)
            finding.state_rank = states.index(finding.state) if finding.state in states else 9

    @api.model
    def _store(self, found, db_ids, run, batch=None):
        """Create or update findings by key; open findings not found again are resolved. Returns
        (opened, resolved) counts."""
        now = fields.Datetime.now()
        existing = {f.key: f for f in self.search([("key", "in", [f.key for f in found])])}
        opened = 0
        creates = []
        for item in found:
            vals = {"kind": item.kind, "severity": item.severity, "message": item.message, "last_seen": now,
                    "run_id": run.id, "entry_refs": ", ".join(item.entry_ids),
                    "entry_ids": [fields.Command.set([db_ids[i] for i in item.entry_ids if i in db_ids])]}
            record = existing.get(item.key)
            if record is None:
                creates.append(dict(vals, key=item.key, state="open", first_seen=now,
                                    opened_batch_id=batch.id if batch else False))
                opened += 1
            elif record.state == "resolved":   # back again: reopened, by this import when there is one
                record.write(dict(vals, state="open", resolved_by=False, resolved_at=False, resolved_batch_id=False,
                                  opened_batch_id=batch.id if batch else False))
                opened += 1
            else:
                if record.kind != item.kind or record.message != item.message or record.severity != item.severity \
                        or record.entry_refs != vals["entry_refs"]:
                    record.write(vals)
                else:
                    record.write({"last_seen": now, "run_id": run.id})
        self.create(creates)
        gone = self.search([("state", "in", ("open", "accepted")), ("key", "not in", [f.key for f in found])])
        gone.write({"state": "resolved", "resolved_at": now, "resolved_by": self.env.user.id,
                    "resolved_batch_id": batch.id if batch else False})
        return opened, len(gone)

    def action_accept(self):
        _check_manager(self.env)
        self.filtered(lambda f: f.state == "open").write({"state": "accepted", "accepted_by": self.env.user.id})
        return True

    def action_reopen(self):
        _check_manager(self.env)
        self.filtered(lambda f: f.state == "accepted").write({"state": "open", "accepted_by": False})
        return True


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
        _check_manager(self.env)
        self.write({"note_state": "planned"})
        return True

    def action_mark_done(self):
        _check_manager(self.env)
        self.write({"note_state": "done"})
        return True


class PvKbEntry(models.Model):
    _inherit = "pv.kb.entry"

    referenced_by_ids = fields.Many2many("pv.kb.entry", compute="_compute_related", string="Referenced by")
    same_basis_ids = fields.Many2many("pv.kb.entry", compute="_compute_related", string="Same legal basis")
    nearest_ids = fields.Many2many("pv.kb.entry", compute="_compute_related", string="Nearest by meaning")
    # curator data: only managers read them (the form shows them to managers only)
    open_finding_ids = fields.Many2many("pv.kb.finding", compute="_compute_open_findings", string="Open findings",
                                        groups="pv_kb.group_pv_kb_manager")
    open_finding_count = fields.Integer(compute="_compute_open_findings", string="Findings",
                                        groups="pv_kb.group_pv_kb_manager")

    def _compute_open_findings(self):
        Finding = self.env["pv.kb.finding"]
        for entry in self:
            findings = Finding.search([("entry_ids", "in", entry.id), ("state", "=", "open")]) \
                if isinstance(entry.id, int) else Finding
            entry.open_finding_ids = findings
            entry.open_finding_count = len(findings)

    def _compute_related(self):
        for entry in self:
            if not entry.id or not isinstance(entry.id, int):
                entry.referenced_by_ids = entry.same_basis_ids = entry.nearest_ids = False
                continue
            entry.referenced_by_ids = self.search([("cross_ref_ids", "in", entry.id)])
            entry.same_basis_ids = self.search([("legal_basis_ids", "in", entry.legal_basis_ids.ids),
                                                ("id", "!=", entry.id)], limit=20) if entry.legal_basis_ids \
                else False
            entry.nearest_ids = self.browse(self._nearest_entry_ids(entry.id))

    @api.model
    def _nearest_entry_ids(self, entry_id, limit=5):
        """Entries whose sections are nearest to this entry's summary (HNSW index)."""
        cr = self.env.cr
        cr.execute("""SELECT embedding::text FROM pv_kb_chunk WHERE entry_id = %s AND embedding IS NOT NULL
                       ORDER BY (section_key = 'zusammenfassung') DESC, position LIMIT 1""", [entry_id])
        row = cr.fetchone()
        if not row:
            return []
        cr.execute("SET LOCAL hnsw.ef_search = 100")
        cr.execute("""SELECT entry_id FROM pv_kb_chunk WHERE embedding IS NOT NULL AND entry_active
                       ORDER BY embedding <=> %s::vector LIMIT 40""", [row[0]])
        found = []
        for (other,) in cr.fetchall():
            if other != entry_id and other not in found:
                found.append(other)
        return found[:limit]

    def action_open_findings(self):
        self.ensure_one()
        _check_manager(self.env)
        title = self.env._("Findings")
        domain = [("entry_ids", "in", self.id)]
        return {"type": "ir.actions.act_window", "name": title, "res_model": "pv.kb.finding",
                "view_mode": "list,form", "domain": domain}


class PvKbQuery(models.Model):
    _inherit = "pv.kb.query"

    is_gap = fields.Boolean("Gap", compute="_compute_is_gap", store=True, index=True,
                            help="Refused, unverified or rated 👎.")

    @api.depends("status", "feedback")
    def _compute_is_gap(self):
        for query in self:
            query.is_gap = query.status in gaps.GAP_STATUSES or query.feedback == "down"


class ResConfigSettings(models.TransientModel):
    _inherit = "res.config.settings"

    pv_kb_health_max_age_months = fields.Integer(
        "Outdated after (months)", config_parameter="pv_kb.health_max_age_months",
        default=HEALTH_DEFAULTS["health_max_age_months"][0], help="0 switches the age rule off.")
    pv_kb_health_duplicate_threshold = fields.Float(
        "Near-duplicate similarity", config_parameter="pv_kb.health_duplicate_threshold", digits=(3, 3),
        default=HEALTH_DEFAULTS["health_duplicate_threshold"][0],
        help="Cosine similarity of two summaries from which they count as near-duplicates (depends on the "
             "embedding model).")
    pv_kb_health_unretrieved_days = fields.Integer(
        "Never retrieved: days", config_parameter="pv_kb.health_unretrieved_days",
        default=HEALTH_DEFAULTS["health_unretrieved_days"][0])
