"""The curator's cockpit: health check of the whole base, gaps of the question log, access."""
import datetime as dt
import os

import yaml

from odoo.exceptions import AccessError
from odoo.tests import new_test_user, tagged

from .common import DEMO_KB, KbCase, StandInCase, batch_files, entry_md, kb_json

TODAY = dt.date(2026, 12, 1)   # fixed: the age rule must not move the test's result with the calendar

# planted in the demo KB (docs/cockpit.md "Demo KB: planted problems"); each as (kind, entries). The fact comparison
# (lib/facts) reads years: only the ATZ pair states two values for the same year (2026); the Kilometergeld and the
# Überstunden of the WIKU sheets (no year: as of their Stand) and the Geringfügigkeitsgrenze 2022 are outdated by
# a newer entry's later values, reported as such with both values. ATZ "Beginn 2027" has no row yet: on 2026-12-01
# the coming year's values are missing (kontinuierlich and Blockzeit).
PLANTED = {
    ("conflict", frozenset({"lb-atz-02", "wiku-atz-01"})),
    ("stale", frozenset({"wiku-atz-01"})),
    ("stale", frozenset({"wiku-rk-01"})),
    ("stale", frozenset({"wiku-ust-01"})),
    ("stale", frozenset({"wiku-gfb-01"})),
    ("dangling_ref", frozenset({"wiku-gfb-01"})),
    ("near_duplicate", frozenset({"lb-sz-01", "wiku-sz-01"})),
    ("next_year", frozenset({"lb-atz-02"})),
    ("next_year", frozenset({"lb-atz-02", "wiku-atz-01"})),
}


def demo_oneway_refs():
    """One-way references of the demo KB, read from the files with plain YAML (not the addon's parser)."""
    refs = {}
    folder = os.path.join(DEMO_KB, "dokumente")
    for name in os.listdir(folder):
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            meta = yaml.safe_load(handle.read().split("---")[1])
        refs[meta["id"]] = set(meta.get("cross_refs") or [])
    return {(a, b) for a, targets in refs.items() for b in targets if b in refs and a not in refs[b]}


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_health")
class TestHealthDemo(StandInCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # the hash stand-in's cosine scale: the planted pair has 0.93, the closest clean pair 0.84
        cls.set_settings(health_duplicate_threshold=0.9)
        files = cls.importer._read_source(path=DEMO_KB)
        cls.import_result = cls.importer._run(files, source_name="demo")
        cls.env["pv.kb.chunk"]._embed_pending()
        cls.health_run = cls.env["pv.kb.health.run"]._run_health_check(trigger="manual", today=TODAY)
        cls.findings = cls.env["pv.kb.finding"].search([("state", "=", "open")])

    def test_the_stored_kinds_are_the_kinds_table(self):
        from odoo.addons.pv_kb.lib.cockpit import health

        selection = self.env["pv.kb.finding"]._fields["kind"].selection
        self.assertEqual([(k.key, k.label) for k in health.FINDING_KINDS], selection)
        rows = self.env["pv.kb.health.run"]._dashboard_data()["findings_by_kind"]
        order = [row["kind"] for row in rows]
        self.assertEqual(order, [k for k in health.KINDS if k in order], "the cockpit lists kinds in table order")

    def test_finds_every_planted_problem_and_nothing_on_clean_entries(self):
        actionable = self.findings.filtered(lambda f: f.severity != "info")
        found = {(f.kind, frozenset(f.entry_ids.mapped("kb_id"))) for f in actionable}
        hits = found & PLANTED
        precision, recall = len(hits) / len(found), len(hits) / len(PLANTED)
        print(f"\nhealth check on the demo KB: {len(actionable)} findings ({len(found)} distinct), "
              f"precision {precision:.3f}, recall {recall:.3f}; missed {sorted(PLANTED - found)}, "
              f"extra {sorted(found - PLANTED)}")
        self.assertEqual((precision, recall), (1.0, 1.0))
        planted_entries = {i for _kind, ids in PLANTED for i in ids}
        self.assertLessEqual(set(actionable.entry_ids.mapped("kb_id")), planted_entries,
                             "no finding on the clean entries")

    def test_oneway_references_are_notes_and_exactly_the_ones_in_the_files(self):
        oneway = self.findings.filtered(lambda f: f.kind == "oneway_ref")
        self.assertEqual(set(oneway.mapped("severity")), {"info"})
        self.assertEqual({tuple(f.entry_refs.split(", ")) for f in oneway}, demo_oneway_refs())

    def test_findings_name_entries_explain_in_german_and_the_run_counts(self):
        dup = self.findings.filtered(lambda f: f.kind == "near_duplicate")
        self.assertIn("fast gleich", dup.message)
        conflict = self.findings.filtered(lambda f: f.kind == "conflict")
        self.assertTrue(all(v in conflict.message for v in ("27,5 %", "28,5 %", "Stand 2025-01", "Stand 2023-06")))
        outdated = self.findings.filtered(lambda f: f.kind == "stale" and "wiku-gfb-01" in f.entry_refs)
        self.assertTrue(all(v in outdated.message for v in ("€ 485,85", "€ 551,10", "[lb-gfb-01]")))
        pkw = self.findings.filtered(lambda f: f.kind == "stale" and "wiku-rk-01" in f.entry_refs)
        self.assertTrue("€ 0,50" in pkw.message and "€ 0,42" in pkw.message)
        self.assertEqual(self.health_run.count_entries, len(os.listdir(os.path.join(DEMO_KB, "dokumente"))))
        self.assertEqual(self.health_run.count_open, len(self.findings))
        self.assertGreater(self.health_run.duration, 0)

    def test_the_answers_conflicts_keep_values_of_earlier_years_apart(self):
        Fact = self.env["pv.kb.fact"]
        plain = Fact._conflicts(["wiku-gfb-01", "lb-gfb-01"])
        self.assertFalse(plain, "years apart are no conflict of an answer")
        replaced = [c for c in Fact._conflicts(["wiku-gfb-01", "lb-gfb-01"], outdated=True) if c.outdated]
        gfb = next(c for c in replaced if "485,85" in c.values["wiku-gfb-01"])
        self.assertEqual(gfb.entry_ids, ["wiku-gfb-01", "lb-gfb-01"], "the older entry first")
        self.assertIn("551,10", gfb.values["lb-gfb-01"])

    def test_a_rerun_updates_instead_of_duplicating(self):
        keys = sorted(self.findings.mapped("key"))
        first_seen = {f.key: f.first_seen for f in self.findings}
        run = self.env["pv.kb.health.run"]._run_health_check(trigger="cron", today=TODAY)
        again = self.env["pv.kb.finding"].search([("state", "=", "open")])
        self.assertEqual(sorted(again.mapped("key")), keys)
        self.assertEqual((run.count_opened, run.count_resolved), (0, 0))
        self.assertEqual({f.key: f.first_seen for f in again}, first_seen)
        self.assertEqual(set(again.mapped("run_id").ids), {run.id})

    def test_accepted_finding_stays_accepted_and_resolves_when_gone(self):
        finding = self.findings.filtered(lambda f: f.kind == "near_duplicate")
        finding.action_accept()
        self.env["pv.kb.health.run"]._run_health_check(today=TODAY)
        self.assertEqual(finding.state, "accepted")
        self.set_settings(health_duplicate_threshold=0.99)
        self.env["pv.kb.health.run"]._run_health_check(today=TODAY)
        self.assertEqual(finding.state, "resolved")
        self.assertEqual(finding.resolved_by, self.env.user)

    def test_entry_without_embedding_is_found(self):
        self.set_settings(health_embedding_grace_minutes=0)
        entry = self.Entry.search([("kb_id", "=", "lb-url-01")])
        self.env.cr.execute("UPDATE pv_kb_chunk SET embedding = NULL WHERE entry_id = %s", [entry.id])
        self.env["pv.kb.health.run"]._run_health_check(today=TODAY)
        finding = self.env["pv.kb.finding"].search([("key", "=", "embedding:none:lb-url-01")])
        self.assertEqual((finding.state, finding.severity, finding.entry_ids), ("open", "high", entry))

    def test_related_entries_on_the_form(self):
        entry = self.Entry.search([("kb_id", "=", "lb-sz-01")])
        self.assertIn("wiku-sz-01", entry.nearest_ids.mapped("kb_id")[:3])
        self.assertNotIn(entry, entry.nearest_ids)
        referrers = self.Entry.search([("cross_ref_ids", "in", entry.id)])
        self.assertTrue(referrers)
        self.assertEqual(entry.referenced_by_ids, referrers)
        self.assertIn("wiku-sz-01", entry.same_basis_ids.mapped("kb_id"))   # § 67 Abs. 1 EStG
        self.assertIn("near_duplicate", entry.open_finding_ids.mapped("kind"))
        self.assertEqual(entry.open_finding_count, len(entry.open_finding_ids))

    def test_dashboard_numbers(self):
        data = self.env["pv.kb.health.run"].action_dashboard_data()
        self.assertEqual(data["open_total"], len(self.findings))
        by_kind = {row["kind"]: row["total"] for row in data["findings_by_kind"]}
        self.assertEqual(by_kind["near_duplicate"], 1)
        self.assertEqual(data["embedding"]["share"], 1.0)
        self.assertEqual(data["last_run"]["id"], self.health_run.id)
        self.assertEqual(data["last_import"]["id"], self.import_result.batch.id)

    def test_gap_grouping_of_the_question_log(self):
        Query = self.env["pv.kb.query"]
        asked = [
            ("Kilometergeld für ein Elektrofahrrad?", "verweigert", False),
            ("Kilometergeld bei Fahrgemeinschaften mit dem Privat-Pkw?", "unsicher", False),
            ("Wie hoch ist das Kilometergeld für Mopeds?", "beantwortet", "down"),
            ("Geringfügigkeitsgrenze für freie Dienstnehmer?", "verweigert", False),
            ("Wie hoch ist der Freibetrag für Sonderzahlungen?", "beantwortet", "up"),
        ]
        records = Query.create([{"question": q, "status": s, "feedback": f or False} for q, s, f in asked])
        self.assertEqual(records.mapped("is_gap"), [True, True, True, True, False])
        self.env["pv.kb.health.run"]._run_health_check(today=TODAY)
        gap = self.env["pv.kb.gap"].search([("kind", "=", "topic"), ("query_ids", "in", records[0].id)])
        self.assertEqual(gap.topic, "reisekosten")
        self.assertEqual(set(gap.query_ids.ids), set(records[:3].ids))
        self.assertEqual((gap.count_refused, gap.count_unsure, gap.count_down), (1, 1, 1))
        self.assertTrue(gap.per_week)
        self.assertNotIn(records[4], self.env["pv.kb.gap"].search([]).query_ids)
        gap.note = "Eintrag: Kilometergeld für Fahrräder und Mopeds"
        gap.action_plan_entry()
        self.env["pv.kb.health.run"]._run_health_check(today=TODAY)
        again = self.env["pv.kb.gap"].search([("key", "=", gap.key)])
        self.assertEqual((again, again.note_state), (gap, "planned"))
        self.assertIn("Fahrräder", again.note)


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_health")
class TestHealthImports(StandInCase):
    """Imports resolve and open findings, and the findings name the import (a stand-in answers the gap
    grouping's embedding requests)."""

    def setUp(self):
        super().setUp()
        params = self.env["ir.config_parameter"].sudo()
        params.set_param("pv_kb.health_max_age_months", 0)

    @staticmethod
    def kern(value):
        return f"| Wert | 2025 |\n|---|---|\n| Kilometergeld Pkw | {value} |"

    def test_import_resolves_one_conflict_and_opens_another(self):
        # two values for the same year: a conflict (values of different years are not, lib/facts/compare.py)
        first = {"lb-tst-01": entry_md("lb-tst-01", title="Kilometergeld", stand="2025-01", kernwerte=self.kern("€ 0,50")),
                 "wiku-tst-01": entry_md("wiku-tst-01", title="Kilometergeld", stand="2023-05",
                                         kernwerte=self.kern("€ 0,42"))}
        batch1 = self.run_import(batch_files(first), source_name="erster Stand").batch
        Finding = self.env["pv.kb.finding"]
        old = Finding.search([("kind", "=", "conflict")])
        self.assertEqual(len(old), 1)
        self.assertEqual((old.state, old.opened_batch_id), ("open", batch1))
        self.assertEqual(set(old.entry_ids.mapped("kb_id")), {"lb-tst-01", "wiku-tst-01"})
        stale = Finding.search([("kind", "=", "stale")])
        self.assertEqual(stale.entry_ids.mapped("kb_id"), ["wiku-tst-01"])

        fixed = {"wiku-tst-01": entry_md("wiku-tst-01", title="Kilometergeld", stand="2023-05",
                                         kernwerte=self.kern("€ 0,50"))}
        batch2 = self.run_import(batch_files(fixed), source_name="Korrektur").batch
        self.assertEqual((old.state, old.resolved_batch_id), ("resolved", batch2))
        self.assertTrue(old.resolved_at)
        self.assertEqual(stale.state, "resolved")

        added = {"lb-tst-02": entry_md("lb-tst-02", title="Kilometergeld", stand="2024-01", kernwerte=self.kern("€ 0,45"))}
        batch3 = self.run_import(batch_files(added), source_name="neuer Eintrag").batch
        new = Finding.search([("kind", "=", "conflict"), ("state", "=", "open")])
        self.assertEqual(len(new), 2, "one finding per pair of entries: lb-tst-02 against each of the others")
        self.assertNotIn(old, new)
        self.assertEqual(set(new.mapped("opened_batch_id").ids), {batch3.id})
        self.assertTrue(all("lb-tst-02" in f.entry_refs and "€ 0,45" in f.message for f in new))
        self.assertEqual(old.state, "resolved", "the resolved conflict stays resolved")
        runs = self.env["pv.kb.health.run"].search([("trigger", "=", "import")])
        self.assertEqual(set(runs.mapped("batch_id").ids), {batch1.id, batch2.id, batch3.id})

    def test_entries_no_question_retrieved_once_the_log_is_long_enough(self):
        entries = {"lb-tst-01": entry_md("lb-tst-01"), "lb-tst-02": entry_md("lb-tst-02")}
        self.run_import(batch_files(entries))
        self.env["ir.config_parameter"].sudo().set_param("pv_kb.health_unretrieved_min_questions", 3)
        Query = self.env["pv.kb.query"]
        Query.create([{"question": f"Frage {n}", "status": "beantwortet", "retrieved_ids": "lb-tst-01, lb-x-09"}
                      for n in range(2)])
        Run = self.env["pv.kb.health.run"]
        Run._run_health_check()
        Finding = self.env["pv.kb.finding"]
        self.assertFalse(Finding.search([("kind", "=", "unretrieved")]), "two questions are no log yet")
        Query.create({"question": "Frage 3", "status": "verweigert", "retrieved_ids": False})
        Run._run_health_check()
        found = Finding.search([("kind", "=", "unretrieved"), ("state", "=", "open")])
        self.assertEqual(found.entry_ids.mapped("kb_id"), ["lb-tst-02"])
        self.assertEqual(found.severity, "info")

    def test_a_rejected_batch_runs_no_check(self):
        runs = self.env["pv.kb.health.run"].search_count([])
        entries = {"lb-tst-01": entry_md("lb-tst-01")}
        result = self.run_import(batch_files(entries, raw={"kb.json": kb_json(entries, count=5)}))
        self.assertFalse(result.applied)
        self.assertEqual(self.env["pv.kb.health.run"].search_count([]), runs)


    def test_an_import_told_to_leave_out_the_check_applies_without_a_run(self):
        # the private parameter the demo evaluation's fixture imports use; every other import runs the check
        Run = self.env["pv.kb.health.run"]
        runs = Run.search_count([])
        entries = {"lb-tst-01": entry_md("lb-tst-01")}
        result = self.run_import(batch_files(entries), health_check=False)
        self.assertTrue(result.applied)
        self.assertEqual(Run.search_count([]), runs)
        self.assertTrue(self.run_import(batch_files({"lb-tst-02": entry_md("lb-tst-02")})).applied)
        self.assertEqual(Run.search_count([]), runs + 1, "without the parameter the check runs")

@tagged("post_install", "-at_install", "pv_kb", "pv_kb_health")
class TestHealthAccess(KbCase):

    def test_users_cannot_run_the_check_or_read_findings(self):
        user = new_test_user(self.env, "kb_reader", groups="base.group_user,pv_kb.group_pv_kb_user")
        Run = self.env["pv.kb.health.run"].with_user(user)
        with self.assertRaises(AccessError):
            Run.action_run_now()
        with self.assertRaises(AccessError):
            Run.action_dashboard_data()
        with self.assertRaises(AccessError):
            self.env["pv.kb.finding"].with_user(user).search([])
        with self.assertRaises(AccessError):
            self.env["pv.kb.gap"].with_user(user).search([])

    def test_users_read_related_entries_but_not_findings(self):
        entries = {"lb-tst-01": entry_md("lb-tst-01", cross_refs=("lb-tst-02",)),
                   "lb-tst-02": entry_md("lb-tst-02", stand="2026-01",
                                         kernwerte="| Wert | Betrag |\n|---|---|\n| Freibetrag | € 600 |")}
        self.run_import(batch_files(entries))
        self.assertTrue(self.env["pv.kb.finding"].search([("kind", "=", "conflict")]))
        user = new_test_user(self.env, "kb_reader2", groups="base.group_user,pv_kb.group_pv_kb_user")
        target = self.Entry.with_user(user).search([("kb_id", "=", "lb-tst-02")])
        # what the entry form reads for a user (the findings part is for managers only)
        (values,) = target.read(["referenced_by_ids", "same_basis_ids", "nearest_ids"])
        source = self.Entry.search([("kb_id", "=", "lb-tst-01")])
        self.assertEqual((values["referenced_by_ids"], values["same_basis_ids"]), (source.ids, source.ids))
        with self.assertRaises(AccessError):
            target.read(["open_finding_ids"])
        with self.assertRaises(AccessError):
            target.action_open_findings()
        manager_view = self.Entry.search([("kb_id", "=", "lb-tst-02")])
        self.assertIn("conflict", manager_view.open_finding_ids.mapped("kind"))

    def test_managers_run_it_from_the_button(self):
        manager = new_test_user(self.env, "kb_curator", groups="base.group_user,pv_kb.group_pv_kb_manager")
        action = self.env["pv.kb.health.run"].with_user(manager).action_run_now()
        self.assertEqual(action["tag"], "display_notification")
        run = self.env["pv.kb.health.run"].search([], limit=1)
        self.assertEqual((run.trigger, run.user_id), ("manual", manager))
