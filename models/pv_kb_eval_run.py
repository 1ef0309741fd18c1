"""Stored evaluation runs: the gold set answered by one chat model in one answer mode (the bake-off).

The numbers and checks are computed by ``lib/evaluation/bakeoff.py``; this model stores them so that runs can be
compared in list, pivot and graph views and over time. Written by ``pv_kb bakeoff``, by the KB manager's
bake-off wizard and by the evaluation of the Odoo test runner.
"""
import json
import time

from markupsafe import Markup

from odoo import api, fields, models
from odoo.exceptions import AccessError, UserError

from ..lib.evaluation import bakeoff
from ..lib.llm import errors as ollama_errors
from ..lib.answer import modes as answer_modes
from .pv_kb_settings import answer_mode_selection

MANAGER = "pv_kb.group_pv_kb_manager"


class PvKbEvalRun(models.Model):
    _name = "pv.kb.eval.run"
    _description = "Evaluation run"
    _order = "date desc, id desc"

    name = fields.Char(required=True, readonly=True)
    date = fields.Datetime(default=fields.Datetime.now, required=True, readonly=True)
    bakeoff_ref = fields.Char("Bake-off", readonly=True, index=True,
                              help="Runs started together: the recommendation compares them.")
    chat_model = fields.Char(readonly=True)
    embedding_model = fields.Char(readonly=True)
    answer_mode = fields.Selection(answer_mode_selection, readonly=True)   # the registered modes
    goldset_name = fields.Char("Gold set", readonly=True)
    goldset_part = fields.Selection([("test", "Held-out part"), ("tuning", "Tuning part"), ("all", "Whole gold set")],
                                    "Part of the gold set", readonly=True, index=True,
                                    help="Which questions were answered (lib/eval_protocol): figures to compare "
                                         "models come from the held-out part; the tuning part is for developing "
                                         "prompts and checks.")
    kb_version = fields.Char("Knowledge base version", readonly=True)
    settings_json = fields.Text("Models and settings (JSON)", readonly=True)
    question_count = fields.Integer("Number of questions", readonly=True)
    citation_precision = fields.Float(readonly=True, digits=(16, 3), aggregator="avg")
    answered_must_contain = fields.Float("Answered with required content", readonly=True, digits=(16, 3),
                                         aggregator="avg",
                                         help="Share of answerable questions answered (beantwortet) with every "
                                              "answer_must_contain string.")
    refusal_accuracy = fields.Float(readonly=True, digits=(16, 3), aggregator="avg",
                                    help="Refuse and injection questions handled correctly.")
    false_refusals = fields.Float(readonly=True, digits=(16, 3), aggregator="avg")
    unsicher_rate = fields.Float("Uncertain rate", readonly=True, digits=(16, 3), aggregator="avg")
    unsicher_codes = fields.Char("Violations behind uncertain answers", readonly=True)
    must_not_contain_hits = fields.Integer("Forbidden content hits", readonly=True, aggregator="sum")
    conflict_handling = fields.Float(readonly=True, digits=(16, 3), aggregator="avg")
    latency_p50_ms = fields.Float("Latency p50 (ms)", readonly=True, digits=(16, 0), aggregator="avg")
    latency_p95_ms = fields.Float("Latency p95 (ms)", readonly=True, digits=(16, 0), aggregator="avg")
    recommended = fields.Boolean(readonly=True)
    recommendation = fields.Text(readonly=True)
    line_ids = fields.One2many("pv.kb.eval.line", "run_id", string="Questions", readonly=True)
    kind_table = fields.Html("Per kind", compute="_compute_kind_table", sanitize=True)

    @api.depends("line_ids.passed", "line_ids.kind")
    def _compute_kind_table(self):
        labels = (self.env._("Kind"), self.env._("Questions"), self.env._("Passed"), self.env._("Answered"),
                  self.env._("Refused"), self.env._("Uncertain"))
        for run in self:
            rows = {}
            for line in run.line_ids:
                row = rows.setdefault(line.kind, [0, 0, 0, 0, 0])
                row[0] += 1
                row[1] += line.passed
                row[2] += line.status == "beantwortet"
                row[3] += line.status == "verweigert"
                row[4] += line.status == "unsicher"
            head = Markup("").join(Markup("<th>%s</th>") % label for label in labels)
            body = Markup("").join(
                Markup("<tr><td>%s</td>%s</tr>") % (kind, Markup("").join(Markup("<td>%s</td>") % n for n in row))
                for kind, row in sorted(rows.items()))
            run.kind_table = Markup('<table class="table table-sm o_pv_kb_kind_table"><thead><tr>%s</tr></thead>'
                                    '<tbody>%s</tbody></table>') % (head, body)

    # --- writing runs (private: called by the CLI, the wizard and the tests) -------------------------
    @api.model
    def _kb_version(self):
        entries = self.env["pv.kb.entry"].sudo().search([])
        changed = max(entries.mapped("write_date"), default=False)
        return self.env._("%(count)s entries, last change %(date)s", count=len(entries),
                          date=fields.Datetime.to_string(changed) if changed else "–")

    @api.model
    def _line_vals(self, gold, result):
        checks = bakeoff.question_checks(
            gold.kind, gold.expected_ids, gold.answer_must_contain, getattr(gold, "answer_must_not_contain", []),
            status=result.status, answer=result.answer, cited_ids=result.cited_ids,
            retrieved_ids=result.retrieved_ids)
        failed = [name for name, ok in checks.items() if not ok]
        return {
            "question_id": gold.id, "question": gold.question, "kind": gold.kind,
            "expected_ids": ", ".join(gold.expected_ids), "retrieved_ids": ", ".join(result.retrieved_ids),
            "cited_ids": ", ".join(result.cited_ids), "status": result.status, "answer": result.answer,
            "violations": "\n".join(result.violations), "rejected_answer": result.rejected or False,
            "total_ms": result.timings.get("total_ms", 0.0), "generate_ms": result.timings.get("generate_ms", 0.0),
            "regenerations": result.regenerations, "checks_json": json.dumps(checks),
            "failed_checks": ", ".join(failed), "passed": not failed,
        }

    @api.model
    def _summary_vals(self, line_vals):
        lines = [{"kind": v["kind"], "expected_ids": [i for i in v["expected_ids"].split(", ") if i],
                  "status": v["status"], "cited_ids": [i for i in v["cited_ids"].split(", ") if i],
                  "retrieved_ids": [i for i in v["retrieved_ids"].split(", ") if i],
                  "checks": json.loads(v["checks_json"]), "violations": v["violations"].split("\n"),
                  "total_ms": v["total_ms"]} for v in line_vals]
        s = bakeoff.run_summary(lines)
        return s, {
            "question_count": s["n"], "citation_precision": s["citation_precision"],
            "answered_must_contain": s["answered_must_contain"] or 0.0,
            "refusal_accuracy": s["refusal_accuracy"] or 0.0, "false_refusals": s["false_refusals"] or 0.0,
            "unsicher_rate": s["unsicher_rate"] or 0.0,
            "unsicher_codes": ", ".join(f"{code} ×{n}" for code, n in s["unsicher_codes"].items()) or False,
            "must_not_contain_hits": s["must_not_contain_hits"], "conflict_handling": s["conflict_handling"] or 0.0,
            "latency_p50_ms": s["latency_p50_ms"] or 0.0, "latency_p95_ms": s["latency_p95_ms"] or 0.0,
        }

    @api.model
    def _run_gold(self, gold, *, goldset_name, overrides=None, bakeoff_ref=False, progress=None, part=False):
        """Answer every gold question with the agent (settings: stored ones plus ``overrides``, given by
        server-side code only) and store the run with one line per question."""
        overrides = dict(overrides or {})
        agent = self.env["pv.kb.agent"]
        settings = self.env["pv.kb.settings"]._get(overrides)
        mode = answer_modes.mode_for(settings["chat_model"], settings["answer_modes"], settings["answer_mode"])
        self._check_server(settings)
        line_vals = []
        for n, q in enumerate(gold, 1):
            started = time.perf_counter()
            result = agent._ask(q.question, log=False, settings=settings)
            line_vals.append(self._line_vals(q, result))
            if progress:
                progress(f"{settings['chat_model']} ({mode}): {n}/{len(gold)} {q.id} {result.status} "
                         f"{time.perf_counter() - started:.1f} s")
        _summary, vals = self._summary_vals(line_vals)
        vals.update({
            "name": f"{settings['chat_model']} · {mode} · {goldset_name}",
            "bakeoff_ref": bakeoff_ref, "chat_model": settings["chat_model"],
            "embedding_model": settings["embedding_model"], "answer_mode": mode, "goldset_name": goldset_name,
            "goldset_part": part,
            "kb_version": self._kb_version(),
            "settings_json": json.dumps(self.env["pv.kb.settings"]._snapshot(settings), ensure_ascii=False),
            "line_ids": [(0, 0, v) for v in line_vals],
        })
        return self.sudo().create(vals)

    @api.model
    def _check_server(self, settings):
        """A run measures a model: with the server down or the model missing every answer would be the
        Notbetrieb and the run a measurement of nothing, so it does not start."""
        client = self.env["pv.kb.settings"]._client(settings, interactive=True)
        try:
            missing = [m for m in (settings["chat_model"], settings["embedding_model"]) if not client.has_model(m)]
        except ollama_errors.OllamaError as exc:
            raise UserError(self.env._("No run started: %(error)s", error=exc.message)) from exc
        finally:
            client.close()
        if missing:
            raise UserError(self.env._("No run started: model %(models)s is missing on %(url)s.",
                                       models=", ".join(missing), url=ollama_errors.redact_url(settings["ollama_url"])))

    @api.model
    def _bakeoff(self, gold, chat_models, answer_modes, *, goldset_name, overrides=None, progress=None, part=False):
        """One run per chat model × answer mode, then the recommendation over them."""
        ref = f"{fields.Datetime.to_string(fields.Datetime.now())} · {goldset_name}"
        runs = self.browse()
        for model in chat_models:
            for mode in answer_modes:
                run_overrides = dict(overrides or {}, chat_model=model, answer_mode=mode, answer_modes="")
                runs |= self._run_gold(gold, goldset_name=goldset_name, overrides=run_overrides, bakeoff_ref=ref,
                                       progress=progress, part=part)
        runs._recommend()
        return runs

    def _recommend(self):
        pairs = [(f"{r.chat_model} ({r.answer_mode})", {
            "citation_precision": r.citation_precision, "answered_must_contain": r.answered_must_contain,
            "refusal_accuracy": r.refusal_accuracy, "latency_p50_ms": r.latency_p50_ms}) for r in self]
        best, text = bakeoff.recommend(pairs)
        if best is not None:
            self.sudo().write({"recommendation": text, "recommended": False})
            self[best].sudo().recommended = True

    # --- button -------------------------------------------------------------------------------------
    def action_open_lines(self):
        """The run's questions, failed first (KB managers)."""
        self.ensure_one()
        if not self.env.user.has_group(MANAGER):
            raise AccessError(self.env._("Only knowledge base managers can open evaluation runs."))
        return {
            "type": "ir.actions.act_window", "res_model": "pv.kb.eval.line", "name": self.name,
            "view_mode": "list,form", "domain": [("run_id", "=", self.id)],
        }


class PvKbEvalLine(models.Model):
    _name = "pv.kb.eval.line"
    _description = "Evaluation run question"
    _order = "passed, id"

    run_id = fields.Many2one("pv.kb.eval.run", required=True, ondelete="cascade", index=True)
    chat_model = fields.Char(related="run_id.chat_model", store=True)
    answer_mode = fields.Selection(related="run_id.answer_mode", store=True)
    question_id = fields.Char("Question id", readonly=True)
    question = fields.Text(readonly=True)
    kind = fields.Char(readonly=True)
    expected_ids = fields.Char(readonly=True)
    retrieved_ids = fields.Char(readonly=True)
    cited_ids = fields.Char(readonly=True)
    status = fields.Char(readonly=True)
    answer = fields.Text(readonly=True)
    violations = fields.Text(readonly=True)
    rejected_answer = fields.Text("Rejected model text", readonly=True)
    total_ms = fields.Float("Total (ms)", readonly=True, digits=(16, 0))
    generate_ms = fields.Float("Generate (ms)", readonly=True, digits=(16, 0))
    regenerations = fields.Integer(readonly=True)
    checks_json = fields.Text("Checks (JSON)", readonly=True)
    failed_checks = fields.Char(readonly=True)
    passed = fields.Boolean(readonly=True)
