"""The fact table: rebuilt with each import, readable by KB users, written only by the import; the coming year's values;
near matches by embedding in the health check."""
from odoo.exceptions import AccessError
from odoo.tests import new_test_user, tagged

from .common import DEMO_KB, KbCase, StandInCase, batch_files, entry_md


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_facts")
class TestFactTable(KbCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.importer._run(cls.importer._read_source(path=DEMO_KB), source_name="demo")
        cls.Fact = cls.env["pv.kb.fact"]

    def test_the_import_fills_the_table_with_years_units_and_places(self):
        facts = self.Fact.search([])
        self.assertGreater(len(facts), 150)
        gfb = self.Fact.search([("kb_id", "=", "lb-gfb-01"), ("label", "=", "Geringfügigkeitsgrenze monatlich")])
        self.assertEqual(sorted((f.year, f.value_text, f.unit, f.basis) for f in gfb),
                         [(2024, "€ 518,44", "€", "monatlich"), (2025, "€ 551,10", "€", "monatlich")])
        atz = self.Fact.search([("kb_id", "=", "lb-atz-02"), ("column_header", "=", "Blockzeit"), ("year", "=", 2026)])
        self.assertEqual((atz.value_text, atz.amount, atz.period_source), ("27,5 %", 27.5, "row"))
        self.assertIn(atz.passage, atz.entry_id.body_md)
        pkw = self.Fact.search([("kb_id", "=", "wiku-rk-01"), ("label", "=", "Pkw")])
        self.assertEqual((pkw.has_year, pkw.year, pkw.period_source), (False, 2023, "stand"))

    def test_a_new_import_replaces_the_facts(self):
        before = self.Fact.search_count([("kb_id", "=", "lb-tst-01")])
        entry = entry_md("lb-tst-01", title="Testwert 2026", stand="2026-01",
                         kernwerte="| Wert | 2026 |\n|---|---|\n| Testgrenze monatlich | € 123,45 |")
        self.importer._run(batch_files({"lb-tst-01": entry}), source_name="t")
        fact = self.Fact.search([("kb_id", "=", "lb-tst-01")])
        self.assertEqual((before, fact.value_text, fact.year), (0, "€ 123,45", 2026))
        changed = entry.replace("€ 123,45", "€ 130")
        self.importer._run(batch_files({"lb-tst-01": changed}), source_name="t2")
        self.assertEqual(self.Fact.search([("kb_id", "=", "lb-tst-01")]).mapped("value_text"), ["€ 130"])

    def test_users_read_but_never_write(self):
        user = new_test_user(self.env, "kb_fact_reader", groups="base.group_user,pv_kb.group_pv_kb_user")
        manager = new_test_user(self.env, "kb_fact_manager", groups="base.group_user,pv_kb.group_pv_kb_manager")
        fact = self.Fact.search([], limit=1)
        self.assertTrue(self.Fact.with_user(user).search_count([]))
        for who in (user, manager):
            with self.assertRaises(AccessError):
                fact.with_user(who).write({"value_text": "€ 1"})
            with self.assertRaises(AccessError):
                fact.with_user(who).unlink()
            with self.assertRaises(AccessError):
                self.Fact.with_user(who).create({"entry_id": fact.entry_id.id})
        # the pivot's grouping: concept by year
        groups = self.Fact.with_user(user)._read_group([("concept_key", "=", "hoechstbeitragsgrundlag"), ("basis", "=", "monatlich")],
                                                       ["year"], ["amount:max"])
        self.assertEqual(sorted(year for year, _ in groups), [2024, 2025])


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_facts")
class TestComingYear(KbCase):

    def test_values_for_the_coming_year_missing_from_the_fourth_quarter(self):
        import datetime as dt
        table = "| Wert | 2025 | 2026 |\n|---|---|---|\n| Testgrenze monatlich | € 500 | € 520 |"
        self.run_import(batch_files({"lb-tst-01": entry_md("lb-tst-01", title="Testgrenze", stand="2026-01",
                                                           kernwerte=table)}))
        Run, Finding = self.env["pv.kb.health.run"], self.env["pv.kb.finding"]
        Run._run_health_check(today=dt.date(2026, 9, 15))
        self.assertFalse(Finding.search([("kind", "=", "next_year"), ("state", "=", "open")]), "before October: not yet")
        Run._run_health_check(today=dt.date(2026, 11, 15))
        finding = Finding.search([("kind", "=", "next_year"), ("state", "=", "open")])
        self.assertEqual(finding.entry_ids.mapped("kb_id"), ["lb-tst-01"])
        self.assertIn("2027", finding.message)
        self.assertIn("€ 520", finding.message)
        # a value "ab 2027" settles it
        table2 = ("| Wert | 2025 | 2026 | ab 2027 |\n|---|---|---|---|\n"
                  "| Testgrenze monatlich | € 500 | € 520 | € 540 |")
        self.run_import(batch_files({"lb-tst-01": entry_md("lb-tst-01", title="Testgrenze", stand="2026-10",
                                                           kernwerte=table2)}))
        Run._run_health_check(today=dt.date(2026, 11, 15))
        self.assertEqual(finding.state, "resolved")

    def test_a_fact_without_year_is_a_note(self):
        import datetime as dt
        self.run_import(batch_files({"lb-tst-02": entry_md("lb-tst-02", title="Testsatz")}))
        self.env["pv.kb.health.run"]._run_health_check(today=dt.date(2026, 11, 15))
        note = self.env["pv.kb.finding"].search([("kind", "=", "no_year")])
        self.assertEqual((note.entry_ids.mapped("kb_id"), note.severity), (["lb-tst-02"], "info"))


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_facts")
class TestFactNearMatches(StandInCase):
    """Differently labelled concepts that share no matching words: the comparison's near match by embedding, with
    the concept texts embedded once through the configured model and stored; without a model server the word
    rules alone, and no error."""

    # the hash stand-in's cosine scale (two labels sharing one of two words: ~0.7; the e5 threshold is for e5)
    SIMILARITY = 0.6
    WEEKLY = "| Wert | 2026 |\n|---|---|\n| Begünstigte Überstunden pro Monat | 15 |"
    SHEET = "| Wert | ab 2026 |\n|---|---|\n| Überstunden/Monat | 10 |"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.set_settings(health_concept_similarity=cls.SIMILARITY)
        cls.load_entries({
            "lb-tst-11": entry_md("lb-tst-11", title="Überstunden 2026", stand="2026-01", tags=["Überstunden"],
                                  kernwerte=cls.WEEKLY),
            "lb-tst-12": entry_md("lb-tst-12", title="Überstunden – Überblick", stand="2026-02",
                                  tags=["Überstunden"], kernwerte=cls.SHEET),
        })

    def conflicts(self):
        return self.env["pv.kb.finding"].search([("kind", "=", "conflict"), ("state", "=", "open")])

    def embedded_concepts(self):
        return [t for r in self.standin.requests_log if r["path"] in ("/api/embed", "/v1/embeddings")
                for t in r.get("texts") or [] if "Überstunden" in t]

    def test_found_with_both_values_and_embedded_once(self):
        Run = self.env["pv.kb.health.run"]
        Run._run_health_check(trigger="manual")
        finding = self.conflicts()
        self.assertEqual(sorted(finding.entry_ids.mapped("kb_id")), ["lb-tst-11", "lb-tst-12"])
        self.assertIn("15", finding.message)
        self.assertIn("10", finding.message)
        # the concepts as shown (the basis is a field of its own)
        self.assertEqual(sorted(self.embedded_concepts()), ["Begünstigte Überstunden", "Überstunden"])
        self.standin.reset()
        Run._run_health_check(trigger="cron")
        Run._run_health_check(trigger="import")
        self.assertEqual(self.embedded_concepts(), [], "stored vectors are not asked for again")
        self.assertEqual(self.conflicts(), finding)
        # the answer's ⚠ block reads the same stored vectors (the model server is not asked during an answer)
        conflicts = self.env["pv.kb.fact"]._conflicts(["lb-tst-11", "lb-tst-12"])
        self.assertEqual([c.entry_ids for c in conflicts], [["lb-tst-11", "lb-tst-12"]])
        self.assertEqual(self.embedded_concepts(), [])

    def test_without_a_model_server_the_word_rules_alone(self):
        self.set_settings(ollama_url="http://127.0.0.1:9", connect_timeout=0.5)
        run = self.env["pv.kb.health.run"]._run_health_check(trigger="manual")
        self.assertTrue(run.count_entries)
        self.assertFalse(self.conflicts(), "no vectors: the labels' words do not match")

    def test_switched_off(self):
        self.set_settings(health_concept_similarity=0)
        self.env["pv.kb.health.run"]._run_health_check(trigger="manual")
        self.assertFalse(self.conflicts())
        self.assertEqual(self.embedded_concepts(), [])
