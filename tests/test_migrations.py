"""The data migrations in migrations/ run against the rows they were written for."""
import importlib.util
import pathlib

from odoo.tests import TransactionCase, tagged

MIGRATIONS = pathlib.Path(__file__).resolve().parents[1] / "migrations"


def _load(version, name):
    spec = importlib.util.spec_from_file_location(f"pv_kb_migration_{version.replace('.', '_')}",
                                                  MIGRATIONS / version / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@tagged("post_install", "-at_install", "pv_kb")
class TestMigrations(TransactionCase):

    def test_1_1_0_sets_the_gold_set_part_from_the_run_name(self):
        Run = self.env["pv.kb.eval.run"]
        names = {
            "held": "goldset.yaml (held-out)",
            "tuning": "goldset.yaml (Tuning-Teil)",
            "slice": "goldset.yaml (held-out) [30–30]",
            "plain": "goldset.yaml",
        }
        runs = {key: Run.create({"name": f"run {key}", "goldset_name": name}) for key, name in names.items()}
        kept = Run.create({"name": "run kept", "goldset_name": "goldset.yaml (held-out)", "goldset_part": "all"})
        self.env.flush_all()
        self.env.cr.execute("UPDATE pv_kb_eval_run SET goldset_part = NULL WHERE id = ANY(%s)",
                            [[r.id for r in runs.values()]])
        self.env.invalidate_all()
        _load("19.0.1.1.0", "post-migrate").migrate(self.env.cr, "19.0.1.0.0")
        self.env.invalidate_all()
        self.assertEqual({key: run.goldset_part for key, run in runs.items()},
                         {"held": "test", "tuning": "tuning", "slice": False, "plain": False})
        self.assertEqual(kept.goldset_part, "all", "a run that has its part keeps it")
