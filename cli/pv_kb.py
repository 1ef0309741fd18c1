"""`odoo-bin --addons-path=… pv_kb <command> …`: the knowledge base from the command line.

Odoo 19 finds this file as ``<addon>/cli/<command>.py`` on the addons path and
loads it as ``odoo.cli.pv_kb`` (without importing the addon package), so the
addon's code is imported only once a registry exists.

    odoo-bin --addons-path=… pv_kb import PATH [--dry-run] [--sync] [-c CONF | -d DB --db_host … -r USER …]

PATH is a wissensbasis/ folder or a ZIP of it.  Exit code 0 on success, 1 when
the batch is rejected, 2 on wrong usage.
"""
import argparse
import sys

from odoo.cli.command import Command
from odoo.tools import config

USAGE = "odoo-bin [--addons-path=…] pv_kb {import} … [Odoo server options]"


class Pv_Kb(Command):
    """Knowledge base tools of the pv_kb addon (import)"""

    name = "pv_kb"

    def run(self, cmdargs):
        parser = argparse.ArgumentParser(prog=f"{USAGE}", add_help=True)
        sub = parser.add_subparsers(dest="command", required=True)
        imp = sub.add_parser("import", help="import a knowledge base batch (folder or ZIP)")
        imp.add_argument("path", help="wissensbasis/ folder or ZIP file")
        imp.add_argument("--dry-run", action="store_true", help="check only, change nothing")
        imp.add_argument("--sync", action="store_true",
                         help="full sync: the batch is the whole base, missing entries are archived")
        args, odoo_args = parser.parse_known_args(cmdargs)
        config.parse_config(odoo_args, setup_logging=True)
        dbnames = config["db_name"]
        if len(dbnames) != 1:
            sys.stderr.write("Bitte genau eine Datenbank angeben (-d DB oder db_name in der Konfiguration).\n")
            sys.exit(2)
        sys.exit(getattr(self, f"cmd_{args.command}")(dbnames[0], args))

    @staticmethod
    def _env(dbname):
        import odoo
        from odoo.modules.registry import Registry

        odoo.service.server.load_server_wide_modules()
        registry = Registry(dbname)
        if "pv.kb.importer" not in registry:
            sys.stderr.write(f"Das Modul pv_kb ist in der Datenbank {dbname} nicht installiert.\n")
            sys.exit(2)
        return registry

    def cmd_import(self, dbname, args):
        from odoo import api
        from odoo.exceptions import UserError

        registry = self._env(dbname)
        with registry.cursor() as cr:
            env = api.Environment(cr, api.SUPERUSER_ID, {"lang": "de_DE"})
            importer = env["pv.kb.importer"]
            try:
                files = importer._read_source(path=args.path)
            except UserError as exc:
                sys.stderr.write(f"{exc}\n")
                return 1
            result = importer.run(files, mode="sync" if args.sync else "add", dry_run=args.dry_run,
                                  source_name=args.path, origin="cli")
            cr.commit()
        sys.stdout.write(result.report)
        return 0 if result.ok else 1
