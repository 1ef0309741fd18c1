"""The curator's cockpit: the health check of the whole base and the numbers of the Übersicht.

The logic lives in ``lib/cockpit/health.py``; this file reads the data for it (SQL where the amount of data asks for
it), lets ``pv.kb.finding`` store what it finds (``models/pv_kb_finding.py``) and refreshes the gap groups
(``models/pv_kb_gap.py``). An entry's neighbours and findings: ``models/pv_kb_entry_related.py``.
"""
import datetime as dt
import json
import logging
import time

from odoo import api, fields, models

from ..lib.cockpit import health
from ..lib.facts import coverage
from ..lib.kb.entry_facts import EntryFacts
from .pv_kb_finding import SEVERITIES, check_manager

_logger = logging.getLogger(__name__)

TRIGGERS = [("cron", "Scheduled"), ("import", "After import"), ("manual", "Manual")]

DUPLICATE_NEIGHBOURS = 8   # nearest chunks looked at per entry summary (HNSW, ef_search 100)


class PvKbHealthRun(models.Model):
    """One run of the health check: when, how long, what it found."""

    _name = "pv.kb.health.run"
    _inherit = ["pv.kb.run.mixin"]
    _description = "Knowledge base health run"

    trigger = fields.Selection(TRIGGERS, readonly=True, required=True, default="manual")
    batch_id = fields.Many2one("pv.kb.batch", "Import", readonly=True, ondelete="set null")
    count_entries = fields.Integer("Entries checked", readonly=True)
    count_open = fields.Integer("Open findings", readonly=True, help="Open findings of the whole base after this run.")
    count_opened = fields.Integer("New findings", readonly=True,
                                  help="Findings this run found for the first time, or again after they had been "
                                       "resolved.")
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
        """The health check's settings (``health_*`` in ``lib/settings/table.py``)."""
        return {key: value for key, value in self.env["pv.kb.settings"]._get().items() if key.startswith("health_")}

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
            infos.append(EntryFacts(entry_id=kb_id, title=name or "", topic=topic, stand=stand,
                                    legal_bases=list(bases), cross_refs=[r for r in refs.split(",") if r],
                                    kernwerte_text=kern))
        return infos, db_ids

    @api.model
    def _duplicate_pairs(self):
        """(a, b, similarity) for each entry's summary and its nearest summaries of other entries.

        The entry cards (lib/search/entry_card.py) are left out of the neighbours: an entry's own card, next to
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

        # conflicts, outdated values and the years' coverage from the fact comparison (lib/facts)
        Fact = self.env["pv.kb.fact"]
        if infos and not Fact.search_count([], limit=1):
            Fact._rebuild()     # a database from before the fact table: filled once
        # near matches by embedding: the check after an import uses the stored vectors only (it must not wait for
        # the model server); the nightly and the manual run embed the concept texts not stored yet
        facts, fact_pairs = Fact._comparison(fetch=trigger != "import")
        fact_conflicts = health.fact_conflicts(fact_pairs)
        extra = health.next_year_findings(coverage.missing_next_year(
            facts, today or fields.Date.context_today(self), month=opts["health_next_year_month"]))
        extra += health.no_year_findings(coverage.without_year(facts))
        t = lap("facts", t)
        found = health.run_checks(
            infos, detect=lambda _entries: fact_conflicts, known_ids=known, duplicate_pairs=pairs,
            embeddings=embeddings, extra=extra,
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
                # the service writes the run and its findings (managers only read them), as the manual run does
                return self.sudo()._run_health_check(trigger="import", batch=batch.sudo())
        except Exception:  # noqa: BLE001 - the import is done; the nightly run tries again
            _logger.exception("pv_kb: health check after import %s failed", batch.name)
            return self.browse()

    def action_run_now(self):
        check_manager(self.env)
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
        check_manager(self.env)
        return self.sudo()._dashboard_data()

    @api.model
    def _dashboard_data(self, days=30):
        cr = self.env.cr
        self.env.flush_all()
        Finding = self.env["pv.kb.finding"]
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
        kind_rows = [by_kind[k] for k in health.KINDS if k in by_kind]
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

