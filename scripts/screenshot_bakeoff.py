"""Screenshots of the bake-off in Odoo: the graph comparing models × answer modes, the pivot and a run form.

Run by ``scripts/screenshot_bakeoff.sh`` against a running Odoo whose database holds bake-off runs.

    python scripts/screenshot_bakeoff.py ODOO_URL DB OUT_DIR [REF]

REF: only the runs of that bake-off (``bakeoff_ref``, e.g. ``--ref`` of scripts/bakeoff_demo.sh) in the graph
and the pivot; without it every run of the held-out part (the runs view's default filter).
"""
import json
import pathlib
import sys
import time

import requests

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from screenshots import Chromium  # noqa: E402


def open_runs(browser, view_type, ref):
    """The runs action in ``view_type``, filtered to the bake-off ``ref`` through the web client's action
    service (the URL of an action carries no search defaults)."""
    context = json.dumps({"search_default_bakeoff_ref": ref, "search_default_held_out": 1})
    browser.eval(f"odoo.__WOWL_DEBUG__.root.env.services.action.doAction('pv_kb.action_pv_kb_eval_run', "
                 f"{{additionalContext: {context}, viewType: '{view_type}', clearBreadcrumbs: true}})")


def main(odoo_url, db, out_dir, ref=None):
    session = requests.Session()
    session.post(f"{odoo_url}/web/session/authenticate",
                 json={"jsonrpc": "2.0", "params": {"db": db, "login": "admin", "password": "admin"}},
                 timeout=30).raise_for_status()
    browser = Chromium()
    try:
        browser.call("Network.enable")
        browser.call("Network.setCookie", name="session_id", value=session.cookies["session_id"], url=odoo_url)
        action = f"{odoo_url}/odoo/action-pv_kb.action_pv_kb_eval_run"
        browser.call("Page.navigate", url=f"{action}?view_type=graph")
        browser.wait_for("!!document.querySelector('.o_graph_renderer canvas')", 90)
        if ref:
            open_runs(browser, "graph", ref)
            browser.wait_for(f"[...document.querySelectorAll('.o_searchview .o_facet_value')].some("
                             f"e => e.textContent.includes({json.dumps(ref)}))", 30)
            time.sleep(1)
        time.sleep(2)
        browser.screenshot(f"{out_dir}/bakeoff-graph.png")
        print(f"screenshot {out_dir}/bakeoff-graph.png")
        browser.call("Page.navigate", url=f"{action}?view_type=pivot")
        browser.wait_for("!!document.querySelector('.o_pivot table')", 90)
        if ref:
            open_runs(browser, "pivot", ref)
            browser.wait_for(f"[...document.querySelectorAll('.o_searchview .o_facet_value')].some("
                             f"e => e.textContent.includes({json.dumps(ref)}))", 30)
            time.sleep(1)
        time.sleep(1.5)
        browser.screenshot(f"{out_dir}/bakeoff-pivot.png")
        print(f"screenshot {out_dir}/bakeoff-pivot.png")
        browser.call("Page.navigate", url=f"{action}?view_type=list")
        browser.wait_for("!!document.querySelector('.o_list_view .o_data_row')", 90)
        time.sleep(1.5)
        browser.screenshot(f"{out_dir}/bakeoff-runs.png")
        print(f"screenshot {out_dir}/bakeoff-runs.png")
        browser.eval("document.querySelector('.o_list_view .o_data_row .o_data_cell').click()")
        browser.wait_for("!!document.querySelector('.o_form_view .o_pv_kb_kind_table')", 60)
        time.sleep(1.5)
        browser.screenshot(f"{out_dir}/bakeoff-run.png")
        print(f"screenshot {out_dir}/bakeoff-run.png")
    finally:
        browser.close()


if __name__ == "__main__":
    main(*sys.argv[1:5])
