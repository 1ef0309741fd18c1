"""The embedding job under production conditions: poisoned sections, time limits, big models, parallel runs,
evaluations with another model."""
import threading
import time
from unittest.mock import patch

from odoo import sql_db
from odoo.tests import tagged
from odoo.tools import config, mute_logger

from odoo.addons.pv_kb.lib.llm import errors as ollama_errors
from odoo.addons.pv_kb.models.pv_kb_chunk_embed import EMBED_LOCK_KEY, SCRATCH_TABLE, EmbeddingBusy

from .common import StandInCase, batch_files, entry_md
from .test_retrieval import compound_entries


def poisoned_entries():
    entries = compound_entries()
    entries["lb-gift-01"] = entry_md(
        "lb-gift-01", title="Eintrag mit kaputtem Abschnitt", topic="test",
        summary="Dieser Abschnitt enthält GIFTIG, woran der Modellserver scheitert.")
    return entries


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_retrieval")
class TestEmbeddingJob(StandInCase):

    embed_models = {"hash-embed": "hash:1024", "other-embed": "hash:1024", "big-embed": "hash:2560",
                    "huge-embed": "hash:4096"}

    def chunks_of(self, kb_id):
        return self.Chunk.search([("kb_id", "=", kb_id)])

    def test_poisoned_section_is_skipped_with_its_error_and_the_rest_embedded(self):
        self.run_import(batch_files(poisoned_entries()))
        self.standin.set_fault("poison", marker="GIFTIG", paths=["/api/embed"])
        with mute_logger("odoo.addons.pv_kb.models.pv_kb_chunk_embed", "odoo.addons.pv_kb.lib.llm.client"):
            result = self.embed_all()
        # the poisoned summary, and the entry card that quotes it
        bad = self.chunks_of("lb-gift-01").filtered(lambda c: "GIFTIG" in (c.text or ""))
        self.assertEqual(sorted(bad.mapped("section_key")), ["card", "zusammenfassung"])
        self.assertEqual(result["failed"], len(bad))
        self.assertEqual(result["remaining"], 0, "the failed sections are not pending for this model")
        self.assertFalse(any(bad.mapped("has_embedding")))
        self.assertTrue(all("500" in e for e in bad.mapped("embedding_error")))
        good = self.Chunk.search([]) - bad
        self.assertTrue(all(good.mapped("has_embedding")), "every other section is embedded")
        status = self.Chunk._embedding_status()
        self.assertEqual((status["failed"], status["pending"]), (len(bad), 0))
        # a second run does not send it again; a model change retries it
        self.standin.reset()
        self.assertEqual(self.embed_all()["done"], 0)
        self.assertEqual([r for r in self.standin.requests_log if r["path"] == "/api/embed"], [])
        self.set_settings(embedding_model="other-embed")
        self.standin.set_fault(None)   # the new model takes the text
        self.assertEqual(self.Chunk._embedding_status()["pending"], len(self.Chunk.search([])))
        self.embed_all()
        bad.invalidate_recordset()
        self.assertTrue(all(bad.mapped("has_embedding")), "retried after the model change, and the server takes it")
        self.assertFalse(any(bad.mapped("embedding_error")))

    def test_a_broken_server_marks_nothing(self):
        self.run_import(batch_files(compound_entries()))
        self.standin.set_fault("500", paths=["/api/embed"])
        with self.assertRaises(ollama_errors.OllamaBadResponse), \
                mute_logger("odoo.addons.pv_kb.models.pv_kb_chunk_embed", "odoo.addons.pv_kb.lib.llm.client"):
            self.embed_all()
        self.assertFalse(self.Chunk.search([("embedding_error", "!=", False)]))

    def test_runs_stop_before_the_time_limit_and_finish_the_backlog_over_several_runs(self):
        self.run_import(batch_files(compound_entries()))
        total = self.Chunk._embedding_status()["total"]
        self.set_settings(embed_batch_size=2)
        self.standin.set_embed_timing(400)
        thread = threading.current_thread()
        had = thread.__dict__.get("start_time", None)
        self.addCleanup(setattr, thread, "start_time", had)
        runs, done = [], 0
        with patch.dict(config.options, {"limit_time_real": 3, "limit_time_real_cron": 0}):
            for _ in range(20):
                # each run is a new cron round: Odoo sets the thread's start time
                thread.start_time = time.time()
                started = time.monotonic()
                deadline = self.Chunk._run_deadline()
                self.assertAlmostEqual(deadline - started, 3, delta=0.2)
                result = self.Chunk._embed_pending(deadline=deadline)
                runs.append((time.monotonic() - started, result["done"], result["stopped"]))
                done += result["done"]
                if not result["remaining"]:
                    break
        self.assertEqual(done, total)
        self.assertGreater(len(runs), 1, "the backlog took several runs")
        self.assertTrue(all(elapsed < 3 for elapsed, _d, _s in runs), runs)
        self.assertTrue(all(stopped == "time" for _e, _d, stopped in runs[:-1]), runs)

    def test_models_above_2000_dimensions_get_a_halfvec_index(self):
        self.run_import(batch_files(compound_entries()))
        self.set_settings(embedding_model="big-embed")
        self.embed_all()
        self.assertEqual(self.Chunk._embedding_dim(), 2560)
        self.env.cr.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'pv_kb_chunk_embedding_hnsw_idx'")
        self.assertIn("halfvec", self.env.cr.fetchone()[0])
        result = self.env["pv.kb.retriever"]._retrieve("Sachbezug Dienstwagen", mode="dense", k=3)
        self.assertIsNone(result.degraded)
        self.assertIn("lb-sb-01", result.entry_ids)

    def test_models_above_4000_dimensions_are_refused_with_a_message(self):
        self.run_import(batch_files(compound_entries()))
        self.set_settings(embedding_model="huge-embed")
        try:   # not assertRaises: its savepoint would roll back the problem the job records
            self.embed_all()
        except ollama_errors.OllamaBadResponse as exc:
            message = exc.message
        else:
            self.fail("a model above 4,000 dimensions must be refused")
        self.assertIn("4096", message)
        self.assertEqual(self.Chunk._embedding_dim(), 1024, "the column stays as it is")
        self.assertIn("4096", self.Chunk._embedding_status()["problem"])
        settings_form = self.env["res.config.settings"].create({})
        self.assertIn("4096", settings_form.pv_kb_embedding_status)

    def test_a_second_run_is_refused_while_one_holds_the_lock(self):
        self.run_import(batch_files(compound_entries()))
        other = sql_db.db_connect(self.env.cr.dbname).cursor()
        try:
            other.execute("SELECT pg_advisory_lock(%s)", [EMBED_LOCK_KEY])
            with self.assertRaises(EmbeddingBusy):
                self.embed_all()
            self.assertEqual([r for r in self.standin.requests_log if r["path"] == "/api/embed"], [])
            other.execute("SELECT pg_advisory_unlock(%s)", [EMBED_LOCK_KEY])
        finally:
            other.close()
        self.assertGreater(self.embed_all()["done"], 0)

    def test_eval_with_another_model_leaves_production_vectors_untouched(self):
        self.run_import(batch_files(compound_entries()))
        self.embed_all()
        cr = self.env.cr

        def production():
            cr.execute("SELECT md5(string_agg(id || ':' || embedding::text || embedding_model, ',' ORDER BY id)) "
                       "FROM pv_kb_chunk")
            return cr.fetchone()[0], self.Chunk._embedding_dim(), \
                self.env["ir.config_parameter"].get_param("pv_kb.embedding_model")
        before = production()
        settings = self.env["pv.kb.settings"]._get({"embedding_model": "big-embed"})
        self.assertTrue(self.Chunk._needs_scratch(settings))
        self.assertFalse(self.Chunk._needs_scratch(self.env["pv.kb.settings"]._get()))
        scratch = self.Chunk._scratch_vectors(settings)
        self.assertEqual((scratch["vector_table"], scratch["vector_dim"]), (SCRATCH_TABLE, 2560))
        result = self.env["pv.kb.retriever"]._retrieve("Sachbezug Dienstwagen", mode="dense", k=3, settings=scratch)
        self.assertIsNone(result.degraded, "dense search ran on the scratch vectors")
        self.assertIn("lb-sb-01", result.entry_ids)
        self.assertEqual(production(), before, "vectors, column type and stored model unchanged")
