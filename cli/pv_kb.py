"""`odoo-bin --addons-path=… pv_kb <command> …`: the knowledge base from the command line.

Odoo 19 finds this file as ``<addon>/cli/<command>.py`` on the addons path and
loads it as ``odoo.cli.pv_kb`` (without importing the addon package), so the
addon's code is imported only once a registry exists.

    odoo-bin --addons-path=… pv_kb import PATH [--dry-run] [--sync] [-c CONF | -d DB --db_host … -r USER …]
    odoo-bin --addons-path=… pv_kb eval --goldset FILE [--kb PATH] [--k 8] [--mode hybrid|dense|fts|all]
                                        [--part test|tuning|all] [--answers] [--json OUT]
                                        [--rerank [--rerank-depth N]] [--rewrite]
                                        [Ollama overrides] [server options]
    odoo-bin --addons-path=… pv_kb ask "Frage …" [Ollama overrides] [server options]
    odoo-bin --addons-path=… pv_kb bakeoff --goldset FILE --chat-models A,B [--answer-modes MODE,…]
                                           [--held-out] [--limit N] [--num-ctx N] [--answer-time-limit S]
                                           [Ollama overrides] [server options]
    odoo-bin --addons-path=… pv_kb embed [Ollama overrides] [server options]

PATH is a wissensbasis/ folder or a ZIP of it.  Ollama overrides (--ollama-url,
--embedding-model, --chat-model, --query-prefix, --passage-prefix; --server-type ollama|openai for the
API of that URL; --chat-servers / --embedding-servers / --rerank-servers "openai http://host:8000" (a line
per server) and --rerank-model, docs/model-servers.md) apply to this run only; the stored settings stay as they are: an evaluation with another
embedding model, server or passage prefix embeds the base into a temporary table
of its own session and leaves the production vectors untouched; ``embed`` takes
only --ollama-url (the same model computed on another server).  ``eval`` reports
the test part of the gold set (held out from tuning, lib/evaluation/protocol.py) unless
--part says otherwise.  ``--rerank`` / ``--rewrite`` (and ``--no-…``) switch the optional chat-model
steps of the search on or off for this run (eval, ask, bakeoff); eval then reports their latency.
Exit code 0 on success,
1 when a batch is rejected or a step fails, 2 on wrong usage.
"""
import argparse
import importlib
import json
import pathlib
import sys
import time

from odoo.cli.command import Command
from odoo.tools import config

# the Ollama settings eval, ask and embed can override for one run (--ollama-url, …); this module is loaded
# before any registry exists, so the list lives here
OLLAMA_OVERRIDE_KEYS = ("ollama_url", "embedding_model", "chat_model", "query_prefix", "passage_prefix", "server_type",
                        "chat_servers", "embedding_servers", "rerank_servers", "rerank_model")
USAGE = "odoo-bin [--addons-path=…] pv_kb {import,eval,ask,embed,bakeoff} … [Odoo server options]"


def answer_modes():
    """The registry of answer modes (``lib/answer/modes``: pure Python, importable before a registry exists)."""
    return importlib.import_module("odoo.addons.pv_kb.lib.answer.modes")


def build_parser():
    """The command line; the answer modes it offers are the registered ones (lib/answer/modes)."""
    parser = argparse.ArgumentParser(prog=f"{USAGE}", add_help=True)
    sub = parser.add_subparsers(dest="command", required=True)
    imp = sub.add_parser("import", help="import a knowledge base batch (folder or ZIP)")
    imp.add_argument("path", help="wissensbasis/ folder or ZIP file (format: docs/kb-format.md)")
    imp.add_argument("--dry-run", action="store_true", help="check only, change nothing")
    imp.add_argument("--sync", action="store_true",
                     help="full sync: the batch is the whole base, missing entries are archived")
    ev = sub.add_parser("eval", help="evaluate retrieval (and answers) on a gold set")
    ev.add_argument("--goldset", required=True, help="gold set YAML (format: docs/eval-format.md)")
    ev.add_argument("--kb", help="import this folder/ZIP first (add mode; format: docs/kb-format.md)")
    ev.add_argument("--k", type=int, default=8)
    ev.add_argument("--mode", choices=["hybrid", "dense", "fts", "all"], default="hybrid")
    ev.add_argument("--part", choices=["test", "tuning", "all"], default="test",
                    help="which part of the gold set: the held-out test part (default), the tuning part, all")
    ev.add_argument("--answers", action="store_true", help="also generate and check answers (needs a chat model)")
    ev.add_argument("--json", dest="json_out", help="write all numbers to this JSON file")
    ask = sub.add_parser("ask", help="ask the assistant one question")
    ask.add_argument("question")
    emb = sub.add_parser("embed", help="compute missing embeddings now")
    ask.add_argument("--answer-time-limit", type=float, help="seconds the model may take (default: setting)")
    bake = sub.add_parser("bakeoff", help="answer a gold set per chat model and answer mode, store the runs")
    bake.add_argument("--goldset", required=True, help="gold set YAML (eval-format.md)")
    bake.add_argument("--chat-models", required=True, help="comma-separated chat models")
    modes = answer_modes()
    bake.add_argument("--answer-modes", default=",".join(m.key for m in modes.registered() if m.bakeoff_default),
                      help="comma-separated answer modes: " + ", ".join(modes.keys()))
    bake.add_argument("--held-out", action="store_true",
                      help="only the held-out test part of the gold set (lib/eval_protocol, as pv_kb eval)")
    bake.add_argument("--part", choices=["test", "tuning", "all"],
                      help="which part of the gold set (default: all; --held-out is --part test); develop "
                           "on the tuning part, report the test part")
    bake.add_argument("--limit", type=int, default=0, help="at most this many questions (0: all)")
    bake.add_argument("--offset", type=int, default=0, help="skip this many questions first")
    bake.add_argument("--num-ctx", type=int, help="context window of the models (default: setting)")
    bake.add_argument("--answer-time-limit", type=float, help="seconds the model may take (default: setting)")
    bake.add_argument("--read-timeout", type=float, help="seconds to wait for the model (default: setting)")
    bake.add_argument("--ref", help="name of the bake-off: runs of several invocations with the same name are "
                                    "compared together (default: date and gold set)")
    for p in (ev, ask, bake):
        for key in OLLAMA_OVERRIDE_KEYS:
            p.add_argument("--" + key.replace("_", "-"))
        # the optional chat-model steps of the search, for this run only (default: the stored settings)
        p.add_argument("--rerank", action=argparse.BooleanOptionalAction, default=None,
                       help="the chat model reranks the best entries (lib/search/rerank.py)")
        p.add_argument("--rerank-depth", type=int, help="how many entries it reranks (5-40, default: setting)")
        p.add_argument("--rewrite", dest="query_rewrite", action=argparse.BooleanOptionalAction, default=None,
                       help="the chat model rewrites the question for the search (lib/search/rewrite.py)")
    emb.add_argument("--ollama-url", help="compute the configured model on this server (this run only)")
    return parser


class Pv_Kb(Command):
    """Knowledge base tools of the pv_kb addon (import, eval, ask, embed)"""

    name = "pv_kb"

    def run(self, cmdargs):
        parser = build_parser()
        args, odoo_args = parser.parse_known_args(cmdargs)
        config.parse_config(odoo_args, setup_logging=True)
        dbnames = config["db_name"]
        if len(dbnames) != 1:
            sys.stderr.write("Name exactly one database (-d DB or db_name in the configuration).\n")
            sys.exit(2)
        sys.exit(getattr(self, f"cmd_{args.command}")(dbnames[0], args))

    @staticmethod
    def _env(dbname):
        from odoo.modules.registry import Registry
        from odoo.service.server import load_server_wide_modules

        load_server_wide_modules()
        registry = Registry(dbname)
        if "pv.kb.importer" not in registry:
            sys.stderr.write(f"The module pv_kb is not installed in the database {dbname}.\n")
            sys.exit(2)
        return registry

    def cmd_import(self, dbname, args):
        from odoo import api
        from odoo.exceptions import UserError

        registry = self._env(dbname)
        with registry.cursor() as cr:
            env = api.Environment(cr, api.SUPERUSER_ID, {})
            env = env(context=self._context(env))
            importer = env["pv.kb.importer"]
            try:
                files = importer._read_source(path=args.path)
            except UserError as exc:
                sys.stderr.write(f"{exc}\n")
                return 1
            result = importer._run(files, mode="sync" if args.sync else "add", dry_run=args.dry_run,
                                  source_name=args.path, origin="cli")
            cr.commit()
        sys.stdout.write(result.report)
        return 0 if result.ok else 1

    @staticmethod
    def _context(env, **extra):
        """German messages when the database has German installed."""
        german = env["res.lang"].search_count([("code", "=", "de_DE"), ("active", "=", True)])
        return dict(extra, lang="de_DE") if german else extra

    @staticmethod
    def _overrides(args):
        keys = OLLAMA_OVERRIDE_KEYS + ("answer_time_limit", "num_ctx", "read_timeout", "rerank", "rerank_depth",
                                       "query_rewrite")
        return {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}

    @staticmethod
    def _progress(text):
        sys.stderr.write(f"\r{text}   ")
        sys.stderr.flush()

    def _embed(self, env, settings):
        from odoo.addons.pv_kb.models.pv_kb_chunk_embed import EmbeddingBusy

        status = env["pv.kb.chunk"]._embedding_status(settings["embedding_model"], settings["passage_prefix"])
        if not status["pending"]:
            return
        sys.stderr.write(f"Embeddings: {status['pending']} sections with {status['model']} …\n")
        started = time.monotonic()
        total = status["pending"]

        def progress(done):
            rate = done / max(time.monotonic() - started, 1e-6)
            self._progress(f"Embeddings: {done}/{total} ({rate:.1f}/s)")
        try:
            result = env["pv.kb.chunk"]._embed_pending(settings=settings, commit=True, progress=progress)
        except EmbeddingBusy:
            sys.stderr.write("Another embedding run (cron or command) is active; try again later.\n")
            raise
        sys.stderr.write("\n")
        if result["failed"]:
            sys.stderr.write(f"Note: the model rejected {result['failed']} sections; they are skipped "
                             "(the error of each in the log and under Konfiguration › Abschnitte).\n")
        if result["truncated"]:
            sys.stderr.write(f"Note: {result['truncated']} sections reach the context window of "
                             f"{status['model']} ({result['context']} tokens) and were embedded cut short "
                             "(details in the log).\n")

    def cmd_embed(self, dbname, args):
        from odoo import api

        from odoo.addons.pv_kb.lib.llm import errors as ollama_errors

        from odoo.addons.pv_kb.models.pv_kb_chunk_embed import EmbeddingBusy

        registry = self._env(dbname)
        with registry.cursor() as cr:
            env = api.Environment(cr, api.SUPERUSER_ID, {})
            try:
                self._embed(env, env["pv.kb.settings"]._get(self._overrides(args)))
            except EmbeddingBusy:
                return 1
            except ollama_errors.OllamaError as exc:
                sys.stderr.write(f"\n{exc.message}\n")
                return 1
            cr.commit()
        return 0

    def cmd_eval(self, dbname, args):
        from odoo import api

        from odoo.addons.pv_kb.lib.evaluation import (
            protocol as eval_protocol,
            metrics as evaluation,
            goldset as goldset_format,
        )
        from odoo.addons.pv_kb.lib.llm import errors as ollama_errors

        try:
            goldset = goldset_format.read_goldset(pathlib.Path(args.goldset))
            split = eval_protocol.split_goldset(goldset.questions, goldset.meta)
        except (OSError, ValueError) as exc:
            sys.stderr.write(f"Gold set: {exc}\n")
            return 2
        for note in goldset.warnings:
            sys.stderr.write(f"Note: {note}\n")
        gold = split.part(args.part)
        part_label = {"test": "test part (never used for tuning)", "tuning": "tuning part",
                      "all": "all questions"}[args.part]
        if not gold:
            sys.stderr.write(f"Gold set: the {part_label} is empty ({split.rule.describe()}).\n")
            return 2
        from odoo.addons.pv_kb.models.pv_kb_chunk_embed import EmbeddingBusy

        registry = self._env(dbname)
        with registry.cursor() as cr:
            env = api.Environment(cr, api.SUPERUSER_ID, {})
            settings = env["pv.kb.settings"]._get(self._overrides(args))
            if args.kb:
                importer = env["pv.kb.importer"]
                result = importer._run(importer._read_source(path=args.kb), source_name=args.kb, origin="cli")
                cr.commit()
                if not result.ok:
                    sys.stdout.write(result.report)
                    return 1
            modes = ["hybrid", "dense", "fts"] if args.mode == "all" else [args.mode]
            needs_vectors = bool(set(modes) & {"hybrid", "dense"})
            try:
                if (needs_vectors or args.answers) and env["pv.kb.chunk"]._needs_scratch(settings):
                    sys.stderr.write(f"Embeddings with {settings['embedding_model']} into a temporary table "
                                     "(the production vectors stay as they are) …\n")
                    settings = env["pv.kb.chunk"]._scratch_vectors(
                        settings, progress=lambda n: self._progress(f"Embeddings: {n}"))
                    sys.stderr.write("\n")
                elif needs_vectors or args.answers:
                    self._embed(env, settings)
            except EmbeddingBusy:
                return 1
            except ollama_errors.OllamaError as exc:
                sys.stderr.write(f"\n{exc.message}\n")
                if needs_vectors or not isinstance(exc, ollama_errors.OllamaUnreachable):
                    return 1
                # full text needs no model: the answers are then those of the Notbetrieb, and said so
                sys.stderr.write("The answers are evaluated in Notbetrieb (without a language model).\n")
            report = env["pv.kb.evaluator"]._run(gold, modes=modes, k=args.k, answers=args.answers,
                                                 progress=self._progress, settings=settings)
            sys.stderr.write("\n")
            title = f"Evaluation {args.goldset}: {part_label}, {len(gold)} of {len(split.questions)} questions, k={args.k}"
            settings = dict(report["settings"], split=split.rule.describe())
            sys.stdout.write(evaluation.format_report(title, report["modes"], settings) + "\n")
            if report.get("gate", {}).get("min_dense_answerable") is not None:
                g = report["gate"]
                sys.stdout.write(f"Refusal gate: lowest similarity of an answerable question "
                                 f"{g['min_dense_answerable']:.3f}; refused below it without a full-text hit "
                                 f"would be: " + ", ".join(
                                     f"{u['id']} ({u['dense_best']:.3f})" for u in g["unanswerable"]
                                     if u["fts_hits"] == 0 and u["dense_best"] is not None
                                     and u["dense_best"] < g["min_dense_answerable"] - 0.01) + "\n")
            for mode, metrics in report["modes"].items():
                if metrics["degraded"]:
                    sys.stdout.write(f"Note [{mode}]: " + " ".join(metrics["degraded"]) + "\n")
                for label, reasons in metrics.get("step_fallbacks", {}).items():
                    # echo: the question came back unchanged; the others: model error or an unusable reply
                    sys.stdout.write(f"{label} [{mode}]: not used for {sum(reasons.values())} of {len(gold)} questions "
                                     "(the original query or the fused order instead): " + ", ".join(
                                         f"{reason} {count}" for reason, count in sorted(reasons.items())) + "\n")
            for mode, misses in report["misses"].items():
                for qid, expected, got in misses:
                    sys.stdout.write(f"Miss [{mode}] {qid}: expected {expected}, retrieved {got}\n")
            if args.json_out:
                report["part"] = {"name": args.part, "rule": split.rule.describe(),
                                  "ids": [q.id for q in gold], "tuning_ids": [q.id for q in split.tuning]}
                with open(args.json_out, "w", encoding="utf-8") as fh:
                    json.dump(report, fh, indent=2, ensure_ascii=False, default=str)
            cr.rollback()
        return 0

    def cmd_ask(self, dbname, args):
        from odoo import api

        registry = self._env(dbname)
        with registry.cursor() as cr:
            env = api.Environment(cr, api.SUPERUSER_ID, {})
            env = env(context=self._context(env))
            settings = env["pv.kb.settings"]._get(self._overrides(args))

            def on_delta(text):
                sys.stdout.write("\n[generated again]\n" if text is None else text)
                sys.stdout.flush()
            result = env["pv.kb.agent"]._ask(args.question, on_delta=on_delta, settings=settings)
            cr.commit()
        sys.stdout.write("\n\n" + "=" * 60 + "\n")
        sys.stdout.write(f"Status: {result.status}\n")
        if result.notice:
            sys.stdout.write(f"Notice: {result.notice}\n")
        sys.stdout.write(result.answer + "\n\n")
        sys.stdout.write(f"Cited: {', '.join(result.cited_ids) or '–'}\n")
        sys.stdout.write(f"Retrieved: {', '.join(result.retrieved_ids) or '–'}\n")
        if result.server:
            sys.stdout.write(f"Server: {result.server}\n")
        if result.violations:
            sys.stdout.write("Violations: " + "; ".join(result.violations) + "\n")
        sys.stdout.write("Timings (ms): " + ", ".join(f"{k}={v:.0f}" for k, v in result.timings.items()) + "\n")
        return 0 if result.status != "fehler" else 1

    def cmd_bakeoff(self, dbname, args):
        from odoo import api
        from odoo.exceptions import UserError

        from odoo.addons.pv_kb.lib.evaluation import bakeoff, goldset as goldset_format

        try:
            goldset = goldset_format.read_goldset(pathlib.Path(args.goldset))
        except (OSError, ValueError) as exc:
            sys.stderr.write(f"Gold set: {exc}\n")
            return 2
        for note in goldset.warnings:
            sys.stderr.write(note + "\n")
        gold, name = goldset.questions, args.goldset.rsplit("/", 1)[-1]
        which = "test" if args.held_out else args.part
        if which:
            label = {"test": " (held-out)", "tuning": " (Tuning-Teil)", "all": ""}[which]
            gold, name = bakeoff.part(gold, which, goldset.meta), name + label
        gold = gold[args.offset:]
        if args.limit:
            gold = gold[: args.limit]
        if args.offset or args.limit:
            name += f" [{args.offset + 1}–{args.offset + len(gold)}]"
        models_ = [m.strip() for m in args.chat_models.split(",") if m.strip()]
        modes = [m.strip() for m in args.answer_modes.split(",") if m.strip()]
        if not models_ or any(m not in answer_modes().keys() for m in modes):
            sys.stderr.write("Name --chat-models, and as --answer-modes only "
                             + ", ".join(answer_modes().keys()) + ".\n")
            return 2
        registry = self._env(dbname)
        ref = args.ref or time.strftime("%Y-%m-%d %H:%M:%S") + " · " + name
        run_ids = []
        with registry.cursor() as cr:
            env = api.Environment(cr, api.SUPERUSER_ID, {})
            env = env(context=self._context(env))
            Run = env["pv.kb.eval.run"]
            for model in models_:
                for mode in modes:
                    overrides = dict(self._overrides(args), chat_model=model, answer_mode=mode, answer_modes="")
                    try:
                        run = Run._run_gold(gold, goldset_name=name, overrides=overrides, bakeoff_ref=ref,
                                            progress=lambda text: sys.stderr.write(text + "\n"),
                                            # a slice (--offset/--limit) is not comparable with a whole part
                                            part=(which or "all") if not (args.offset or args.limit) else False)
                    except UserError as exc:
                        sys.stderr.write(f"{model} ({mode}): {exc}\n")
                        return 1
                    cr.commit()      # each finished run is kept, whatever happens to the next
                    run_ids.append(run.id)
                    sys.stdout.write(f"{run.name}: citation precision {run.citation_precision:.3f}, answered with "
                                     f"required content {run.answered_must_contain:.3f}, refusals right "
                                     f"{run.refusal_accuracy:.3f}, unsicher {run.unsicher_rate:.3f} "
                                     f"({run.unsicher_codes or '–'}), forbidden content {run.must_not_contain_hits}, "
                                     f"false refusals {run.false_refusals:.3f}, p50 {run.latency_p50_ms / 1000:.1f} s, "
                                     f"p95 {run.latency_p95_ms / 1000:.1f} s\n")
                    sys.stdout.flush()
            runs = Run.search([("bakeoff_ref", "=", ref)])
            runs._recommend()
            cr.commit()
            sys.stdout.write((runs.filtered("recommended").recommendation or "") + "\n")
        return 0
