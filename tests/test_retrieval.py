import re
from unittest.mock import patch

from odoo.tests import tagged
from odoo.tools import SQL, mute_logger

from odoo.addons.pv_kb.lib.llm import errors as ollama_errors

from .common import StandInCase, batch_files, entry_md


def compound_entries():
    return {
        "lb-ueb-01": entry_md(
            "lb-ueb-01", title="Überstundenzuschläge", topic="ueberstunden",
            summary="Für Überstunden gebührt ein Zuschlag von 50 %. Überstundenzuschläge sind teilweise steuerfrei.",
            kernwerte="| Wert | Betrag |\n|---|---|\n| Zuschlag | 50 % |"),
        "lb-url-01": entry_md(
            "lb-url-01", title="Ersatzleistung für Urlaub", topic="urlaub",
            summary="Bei Beendigung des Dienstverhältnisses wird nicht verbrauchter Urlaub als Ersatzleistung "
                    "für Urlaub abgegolten.",
            kernwerte="| Wert | Betrag |\n|---|---|\n| Anspruch | aliquot |"),
        "lb-sb-01": entry_md(
            "lb-sb-01", title="Dienstwagen als Sachbezug", topic="sachbezuege",
            summary="Die Privatnutzung eines Dienstwagens ist ein Sachbezug von 2 % der Anschaffungskosten.",
            kernwerte="| Wert | Betrag |\n|---|---|\n| Höchstbetrag | € 960 |"),
    }


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_retrieval")
class TestEmbedding(StandInCase):

    def test_embeds_every_chunk_once_with_header(self):
        self.run_import(batch_files(compound_entries()))
        status = self.env["pv.kb.chunk"]._embedding_status()
        self.assertEqual(status["pending"], status["total"])
        result = self.embed_all()
        self.assertEqual(result["done"], status["total"])
        self.assertEqual(result["remaining"], 0)
        self.assertEqual(self.env["pv.kb.chunk"]._embedding_dim(), 1024, "column typed to the model's dimension")
        embeds = [r for r in self.standin.requests_log if r["path"] == "/api/embed"]
        self.assertEqual(sum(r["n_inputs"] for r in embeds), status["total"])
        self.assertEqual(len(embeds), -(-status["total"] // 16), "batched by embed_batch_size")
        self.assertEqual(self.embed_all()["done"], 0, "nothing left to do")
        chunk = self.Chunk.search([("kb_id", "=", "lb-ueb-01")], limit=1)
        self.assertEqual(chunk.embedding_model, "hash-embed")
        self.assertRegex(chunk.embedded_hash, "^[0-9a-f]{64}$")

    def test_a_changed_title_or_passage_prefix_is_embedded_again(self):
        # the header sent to the model holds the entry title; the prefix is a setting: neither is in the
        # chunk's content hash, both are in its embedding signature
        self.run_import(batch_files(compound_entries()))
        self.embed_all()
        entry = self.Entry.search([("kb_id", "=", "lb-sb-01")])
        entry.name = "Dienstwagen – Sachbezug (neu gefasst)"
        status = self.env["pv.kb.chunk"]._embedding_status()
        # its sections and its entry card (both embedded under the title), nothing else
        self.assertEqual(status["pending"], len(entry.chunk_ids) + 1, "only the renamed entry's chunks and card")
        self.standin.reset()
        self.assertEqual(self.embed_all()["done"], len(entry.chunk_ids) + 1)
        sent = [r["first_input"] for r in self.standin.requests_log if r["path"] == "/api/embed"]
        self.assertTrue(sent and sent[0].startswith("Dienstwagen – Sachbezug (neu gefasst) – "), sent)

        self.set_settings(passage_prefix="passage: ")
        self.assertEqual(self.env["pv.kb.chunk"]._embedding_status()["pending"], status["total"])
        self.standin.reset()
        self.assertEqual(self.embed_all()["done"], status["total"])
        sent = [r["first_input"] for r in self.standin.requests_log if r["path"] == "/api/embed"]
        self.assertTrue(all(text.startswith("passage: ") for text in sent), sent)
        self.assertEqual(self.embed_all()["done"], 0, "nothing left to do")

    def test_sections_cut_by_the_models_context_are_reported(self):
        from odoo.addons.pv_kb.lib.kb import chunking
        from odoo.addons.pv_kb.testing.standin import OllamaStandIn

        self.run_import(batch_files(compound_entries()))
        # the stand-in counts words + 2 per input and cuts them at the context, as Ollama cuts at the model's
        sizes = []
        for chunk in self.Chunk.search([]):
            text = chunking.embed_text(chunking.Chunk(chunk.section_key, chunk.heading_path or "", chunk.text or "",
                                                      0, 0, ""), chunk.entry_id.name, chunk.kb_id)
            sizes.append(len(re.findall(r"\w+", text)) + 2)
        context = sorted(sizes)[len(sizes) // 2]   # about half the sections are longer
        # the client spreads a batch's token count over its texts by characters (lib/llm/tokens.py), so a text of
        # long words (an entry card's synonyms) counts more than its words, one of short ones less
        clearly_long = sum(1 for n in sizes if n >= 1.5 * context)
        not_short = sum(1 for n in sizes if n > 0.75 * context)
        self.assertGreater(clearly_long, 0, sizes)
        other = OllamaStandIn(embed_models={"short-ctx": f"hash:256:{context}"}, request_overhead_ms=0).start()
        self.addCleanup(other.stop)
        self.set_settings(ollama_url=other.url, embedding_model="short-ctx")
        with self.assertLogs("odoo.addons.pv_kb.models.pv_kb_chunk_embed", "WARNING") as logs:
            result = self.embed_all()
        self.assertEqual(result["context"], context)
        self.assertTrue(clearly_long <= result["truncated"] <= not_short, (result, clearly_long, not_short, sizes))
        self.assertIn(f"{result['truncated']} sections reached the context of embedding model short-ctx",
                      logs.output[0])
        # kept per section, and reported by the health check
        cut = self.Chunk.search([("embedding_cut", "=", True)])
        self.assertEqual(len(cut), result["truncated"])
        self.env["ir.config_parameter"].set_param("pv_kb.health_embedding_grace_minutes", -1)
        self.env["pv.kb.health.run"]._run_health_check()
        findings = self.env["pv.kb.finding"].search([("kind", "=", "embedding"), ("state", "=", "open")])
        self.assertIn("gekürzt", " ".join(findings.mapped("message")))
        # an entry card (title, tags, synonyms; made by the import) is no section a curator can shorten: the
        # finding names the sections
        sections = cut.filtered(lambda c: c.section_key != "card")
        self.assertTrue(sections and set(sections.entry_id.ids) <= set(findings.entry_ids.ids),
                        (cut.mapped("section_key"), findings.mapped("message")))

    def test_resumes_after_failure_mid_run_without_duplicates_or_gaps(self):
        self.run_import(batch_files(compound_entries()))
        total = self.env["pv.kb.chunk"]._embedding_status()["total"]
        self.set_settings(embed_batch_size=4)
        self.env["pv.kb.chunk"]._embed_pending(max_batches=1)
        self.assertEqual(self.env["pv.kb.chunk"]._embedding_status()["pending"], total - 4)
        self.standin.set_fault("500", paths=["/api/embed"])
        with self.assertRaises(ollama_errors.OllamaError), mute_logger("odoo.addons.pv_kb.lib.llm.client"):
            self.env["pv.kb.chunk"]._embed_pending()
        self.assertEqual(self.env["pv.kb.chunk"]._embedding_status()["pending"], total - 4,
                         "a failed batch writes nothing, earlier batches stay")
        self.standin.set_fault(None)
        self.standin.reset()
        self.env["pv.kb.chunk"]._embed_pending()
        self.assertEqual(self.env["pv.kb.chunk"]._embedding_status()["pending"], 0)
        embedded = sum(r["n_inputs"] for r in self.standin.requests_log if r["path"] == "/api/embed")
        self.assertEqual(embedded, total - 4, "the resumed run embeds exactly the chunks that were left")

    def test_changed_text_is_reembedded_and_cron_survives_outage(self):
        self.run_import(batch_files(compound_entries()))
        self.embed_all()
        entries = compound_entries()
        entries["lb-sb-01"] = entries["lb-sb-01"].replace("€ 960", "€ 720")
        self.run_import(batch_files(entries))
        self.assertEqual(self.env["pv.kb.chunk"]._embedding_status()["pending"], 1, "only the changed chunk")
        self.set_settings(ollama_url="http://127.0.0.1:9")
        with mute_logger("odoo.addons.pv_kb.models.pv_kb_chunk_embed", "odoo.addons.pv_kb.lib.llm.client"):
            self.env["pv.kb.chunk"]._cron_embed()   # logs and returns: the next run resumes
        self.assertEqual(self.env["pv.kb.chunk"]._embedding_status()["pending"], 1)

    def test_model_switch_to_other_dimension_rebuilds_column_and_keeps_entries(self):
        self.run_import(batch_files(compound_entries()))
        self.embed_all()
        entries_before = self.Entry.search([]).ids
        from odoo.addons.pv_kb.testing.standin import OllamaStandIn

        other = OllamaStandIn(embed_models={"e5-small": "e5"}, request_overhead_ms=0).start()
        self.addCleanup(other.stop)
        self.set_settings(ollama_url=other.url, embedding_model="e5-small", passage_prefix="passage: ",
                          query_prefix="query: ")
        result = self.embed_all()
        self.assertEqual(self.env["pv.kb.chunk"]._embedding_dim(), 384)
        self.assertEqual(result["remaining"], 0)
        self.assertEqual(self.Entry.search([]).ids, entries_before)
        self.env.cr.execute("SELECT count(*) FROM pv_kb_chunk WHERE embedding IS NULL")
        self.assertEqual(self.env.cr.fetchone()[0], 0)
        self.env.cr.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'pv_kb_chunk_embedding_hnsw_idx'")
        self.assertIn("hnsw", self.env.cr.fetchone()[0])
        hits = self.env["pv.kb.retriever"]._retrieve("Firmenauto privat nutzen", mode="dense", k=3)
        self.assertEqual(hits.entry_ids[0], "lb-sb-01")


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_retrieval")
class TestRetrieval(StandInCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.load_entries(compound_entries())

    def retrieve(self, question, **kw):
        return self.env["pv.kb.retriever"]._retrieve(question, **kw)

    def test_fulltext_matches_compounds_both_ways(self):
        split = self.retrieve("Zuschläge für Überstunden", mode="fts", k=3)
        self.assertEqual(split.entry_ids[0], "lb-ueb-01")
        joined = self.retrieve("Urlaubsersatzleistung bei Kündigung", mode="fts", k=3)
        self.assertEqual(joined.entry_ids[0], "lb-url-01")

    def test_synonyms_expand_the_query(self):
        result = self.retrieve("Firmenauto", mode="fts", k=3)
        self.assertTrue(result.entry_ids, "Firmenauto -> Dienstwagen via the synonym table")
        self.assertEqual(result.entry_ids[0], "lb-sb-01")
        self.env["pv.kb.synonym"].search([("term", "=", "Firmenauto")]).action_archive()
        self.assertNotIn("lb-sb-01", self.retrieve("Firmenauto", mode="fts", k=3).entry_ids)

    def test_hybrid_modes_and_filters(self):
        for mode in ("hybrid", "dense", "fts"):
            with self.subTest(mode):
                result = self.retrieve("Sachbezug Dienstwagen Privatnutzung", mode=mode, k=3)
                self.assertEqual(result.mode, mode)
                self.assertEqual(result.entry_ids[0], "lb-sb-01")
                self.assertIsNone(result.degraded)
        filtered = self.retrieve("Sachbezug Dienstwagen", k=3, filters={"topics": ["urlaub"]})
        self.assertEqual(filtered.entry_ids[:1], ["lb-url-01"])
        self.assertNotIn("lb-sb-01", filtered.entry_ids)

    def test_the_entry_facts_read_with_the_lists_are_those_of_the_entries_found(self):
        # the dense and full-text statements bring each entry's Stand and cross references along (fusion reads
        # them); they must be exactly what the separate query reads, for every entry of every list
        Retriever = self.env["pv.kb.retriever"]
        settings = self.env["pv.kb.settings"]._get()
        cand = Retriever._candidates("Sachbezug Dienstwagen Urlaub", "hybrid", None, settings, cards=True)
        found = {h.entry_id for hits in cand.lists.values() for h in hits}
        self.assertEqual(set(cand.lists), {"dense", "fts", "card"})
        self.assertGreaterEqual(len(found), 2)
        self.assertEqual(cand.light, Retriever._entry_light(found))

    def test_falls_back_to_fulltext_when_ollama_is_down(self):
        self.set_settings(ollama_url="http://127.0.0.1:9")
        with mute_logger("odoo.addons.pv_kb.models.pv_kb_retriever", "odoo.addons.pv_kb.lib.llm.client"):
            result = self.retrieve("Zuschläge für Überstunden", k=3)
        self.assertEqual(result.mode, "fts")
        self.assertIn("nicht erreichbar", result.degraded)
        self.assertEqual(result.entry_ids[0], "lb-ueb-01")
        self.assertIsInstance(result.ollama_error, ollama_errors.OllamaUnreachable)

    def test_cross_refs_of_top_entries_are_added_as_marked_expansion(self):
        entries = compound_entries()
        entries["lb-sb-01"] = entry_md("lb-sb-01", title="Dienstwagen als Sachbezug", topic="sachbezuege",
                                       summary="Die Privatnutzung eines Dienstwagens ist ein Sachbezug.",
                                       cross_refs=["lb-url-01"])
        self.run_import(batch_files(entries))
        self.embed_all()
        result = self.retrieve("Dienstwagen Sachbezug", mode="fts", k=1)
        self.assertEqual(result.entry_ids[0], "lb-sb-01")
        expansions = [e for e in result.entries if e.expansion]
        self.assertEqual([e.entry_id for e in expansions], ["lb-url-01"])


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_retrieval")
class TestEntryCard(StandInCase):
    """One entry card per entry (lib/search/entry_card.py): embedded, ranked as its own list, never a passage."""

    def card(self, kb_id):
        return self.Chunk.search([("kb_id", "=", kb_id), ("section_key", "=", "card")])

    def test_cards_follow_import_and_synonyms_and_stay_out_of_sections_and_passages(self):
        self.run_import(batch_files(compound_entries()))
        entry = self.Entry.search([("kb_id", "=", "lb-sb-01")])
        card = self.card("lb-sb-01")
        self.assertEqual(len(card), 1)
        # tags and summary of the entry, and the curator's terms that point at it (synonym table)
        self.assertIn("Auch genannt: ", card.text)
        self.assertIn("Firmenauto", card.text)
        self.assertIn("Privatnutzung eines Dienstwagens", card.text)
        self.assertNotIn(card, entry.chunk_ids, "a card is not a section of the entry")
        self.assertEqual(entry.chunk_count, len(entry.chunk_ids))
        self.embed_all()
        self.assertTrue(card.has_embedding)

        # a synonym edit reaches the card, which is then embedded again
        old_hash = card.content_hash
        self.env["pv.kb.synonym"].create({"term": "Flottenfahrzeug", "expansions": "Dienstwagen"})
        self.assertIn("Flottenfahrzeug", card.text)
        self.assertNotEqual(card.content_hash, old_hash)
        self.assertEqual(self.env["pv.kb.chunk"]._embedding_status()["pending"], 1)

        # re-importing a changed entry keeps its card (and the card's embedding when its text is unchanged)
        self.embed_all()
        entries = compound_entries()
        entries["lb-ueb-01"] = entries["lb-ueb-01"].replace("teilweise steuerfrei", "zum Teil steuerfrei")
        self.run_import(batch_files(entries))
        self.assertEqual(len(self.card("lb-ueb-01")), 1)
        self.assertEqual(self.card("lb-sb-01").content_hash, card.content_hash)
        self.assertTrue(self.card("lb-sb-01").has_embedding)

        # the card list ranks entries; no retrieved passage and no context row is ever a card
        Retriever = self.env["pv.kb.retriever"]
        cards = Retriever._dense_hits([0.1] * 1024, cards=True)
        self.assertEqual({h.section_key for h in cards}, {"card"})
        self.assertEqual(len(cards), 3)
        self.assertNotIn("card", {h.section_key for h in Retriever._dense_hits([0.1] * 1024)})
        result = Retriever._retrieve("Firmenauto privat fahren", k=3)
        self.assertNotIn("card", {row["section_key"] for row in result.chunks.values()})
        rows = Retriever._chunk_rows(kb_ids=["lb-sb-01"])
        self.assertTrue(rows)
        self.assertNotIn("card", {row["section_key"] for row in rows.values()})

    def test_a_base_without_cards_gets_them_before_embedding(self):
        self.run_import(batch_files(compound_entries()))
        self.Chunk.search([("section_key", "=", "card")]).unlink()
        self.embed_all()
        self.assertEqual(len(self.Chunk.search([("section_key", "=", "card")])), 3)
        self.assertEqual(self.env["pv.kb.chunk"]._embedding_status()["pending"], 0)


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_retrieval")
class TestVectorIndex(StandInCase):
    """The dense query the retriever runs is served by the HNSW index (EXPLAIN at a few thousand rows)."""

    def test_the_index_is_built_with_the_options_of_embed_job_and_rebuilt_when_they_change(self):
        from odoo.addons.pv_kb.lib.kb import embed_job
        cr = self.env.cr

        def options():
            cr.execute("SELECT relname, reloptions FROM pg_class WHERE relname IN "
                       "('pv_kb_chunk_embedding_hnsw_idx', 'pv_kb_chunk_card_hnsw_idx')")
            return {name: ",".join(sorted(opts or [])) for name, opts in cr.fetchall()}

        wanted = embed_job.hnsw_options()
        self.assertEqual(options(), {"pv_kb_chunk_embedding_hnsw_idx": wanted, "pv_kb_chunk_card_hnsw_idx": wanted})
        # a database built with pgvector's defaults gets the index anew at the next module update
        cr.execute("DROP INDEX pv_kb_chunk_embedding_hnsw_idx")
        cr.execute("CREATE INDEX pv_kb_chunk_embedding_hnsw_idx ON pv_kb_chunk USING hnsw "
                   "(embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)")
        self.assertEqual(options()["pv_kb_chunk_embedding_hnsw_idx"], "ef_construction=64,m=16")
        self.env["pv.kb.chunk"]._init_embedding_column()
        self.assertEqual(options()["pv_kb_chunk_embedding_hnsw_idx"], wanted)

    def test_dense_query_uses_the_hnsw_index(self):
        cr = self.env.cr
        from odoo.addons.pv_kb.lib.kb import embed_job
        # e5-small's dimension, set through the same code path as a model switch (no rows yet). Built with
        # pgvector's default options: a denser index may be priced above a sequential scan of these 4,000
        # narrow rows, and this test is about whether the query's shape lets the index serve it, not about the
        # planner's choice at this size
        with patch.object(embed_job, "HNSW_M", 16), patch.object(embed_job, "HNSW_EF_CONSTRUCTION", 64):
            self.env["pv.kb.chunk"]._ensure_embedding_dim(384)
        a, b = self.Entry.create([{"kb_id": "lb-vec-01", "name": "A", "topic": "a"},
                                  {"kb_id": "lb-vec-02", "name": "B", "topic": "b"}])
        cr.execute("""
            INSERT INTO pv_kb_chunk (entry_id, kb_id, entry_active, section_key, position, text, content_hash,
                                     embedding)
            SELECT CASE WHEN g %% 10 = 0 THEN %s ELSE %s END, CASE WHEN g %% 10 = 0 THEN %s ELSE %s END,
                   true, 'other', g, 'x', md5(g::text),
                   (SELECT array_agg(random())::vector(384) FROM generate_series(1, 384) WHERE g > 0)
              FROM generate_series(1, 4000) g""", [b.id, a.id, b.kb_id, a.kb_id])
        cr.execute("ANALYZE pv_kb_chunk")
        explained = []
        real_execute = type(cr).execute

        def explain_dense(self_, query, params=None, *args, **kwargs):
            text = query.code if hasattr(query, "code") else str(query)
            if "ORDER BY c.embedding <=>" in text:
                real_execute(self_, SQL("EXPLAIN %s", query) if hasattr(query, "code") else "EXPLAIN " + query,
                             params, *args, **kwargs)
                explained.append("\n".join(r[0] for r in self_.fetchall()))
            return real_execute(self_, query, params, *args, **kwargs)

        Retriever = self.env["pv.kb.retriever"]
        with patch.object(type(cr), "execute", explain_dense):
            hits = Retriever._dense_hits([0.1] * 384)
            filtered = Retriever._dense_hits([0.1] * 384, filters={"topics": ["b"]})
        self.assertEqual(len(explained), 2)
        self.assertIn("Index Scan using pv_kb_chunk_embedding_hnsw_idx", explained[0])
        # with a selective entry filter the planner may search the few matching rows exactly instead
        self.assertEqual(len(hits), 50)
        self.assertEqual([h.rank for h in hits], list(range(1, 51)))
        self.assertEqual(hits, sorted(hits, key=lambda h: -h.score))
        self.assertEqual(len(filtered), 50, "the iterative scan fills the filtered list")
        self.assertEqual({h.entry_id for h in filtered}, {"lb-vec-02"})


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_retrieval")
class TestModelMismatch(StandInCase):

    def test_switched_model_before_reembedding_falls_back_to_fulltext(self):
        self.run_import(batch_files(compound_entries()))
        self.embed_all()
        from odoo.addons.pv_kb.testing.standin import OllamaStandIn

        other = OllamaStandIn(embed_models={"small": "hash:256"}, request_overhead_ms=0).start()
        self.addCleanup(other.stop)
        self.set_settings(ollama_url=other.url, embedding_model="small")
        result = self.env["pv.kb.retriever"]._retrieve("Zuschläge für Überstunden", k=3)
        self.assertEqual(result.mode, "fts")
        self.assertIn("small", result.degraded)
        self.assertEqual(result.entry_ids[0], "lb-ueb-01")

    def test_vectors_of_another_model_are_not_compared(self):
        self.run_import(batch_files(compound_entries()))
        self.embed_all()
        self.env.cr.execute("UPDATE pv_kb_chunk SET embedding_model = 'old-model' WHERE kb_id = 'lb-sb-01'")
        hits = self.env["pv.kb.retriever"]._dense_hits([0.1] * 1024, model="hash-embed")
        self.assertTrue(hits)
        self.assertNotIn("lb-sb-01", {h.entry_id for h in hits})
