"""Screenshots of the chat panel from a real run, and the panel's first-text latency.

Run by ``scripts/screenshots.sh`` against a running Odoo (demo KB, stand-in model). Drives headless
Chromium over the DevTools protocol (websocket-client): logs in, opens the systray panel, asks questions,
saves PNGs to docs/screenshots/, and measures how long after the stand-in wrote its first token the first
answer text is in the panel's DOM (a MutationObserver stamps Date.now(); both clocks are this machine's).

    python scripts/screenshots.py ODOO_URL DB STANDIN_URL OUT_DIR
"""
import base64
import itertools
import json
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import requests
import websocket


class Chromium:
    def __init__(self, width=1440, height=900):
        with socket.socket() as sock:   # a free port: never attach to somebody else's Chromium
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self.profile = tempfile.mkdtemp(prefix="pv_kb_chromium_")
        self.proc = subprocess.Popen(
            ["/usr/bin/chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--remote-debugging-port={port}", f"--user-data-dir={self.profile}",
             f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        page = None
        for _ in range(100):
            try:
                page = next(t for t in requests.get(f"http://127.0.0.1:{port}/json", timeout=2).json()
                            if t["type"] == "page")
                break
            except Exception:   # noqa: BLE001 - not up yet
                time.sleep(0.2)
        if page is None:
            self.close()
            raise RuntimeError("Chromium did not start (no DevTools page)")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=120, suppress_origin=True)
        self.ids = itertools.count(1)
        self.call("Page.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                  mobile=False)

    def call(self, method, **params):
        i = next(self.ids)
        self.ws.send(json.dumps({"id": i, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == i:
                if "error" in msg:
                    raise RuntimeError(msg["error"])
                return msg.get("result")

    def eval(self, expr):
        result = self.call("Runtime.evaluate", expression=expr, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(json.dumps(result["exceptionDetails"])[:1000])
        return result["result"].get("value")

    def wait_for(self, expr, timeout=60):
        end = time.time() + timeout
        while time.time() < end:
            if self.eval(expr):
                return
            time.sleep(0.1)
        raise TimeoutError(expr)

    def screenshot(self, path):
        with open(path, "wb") as fh:
            fh.write(base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"]))

    def close(self):
        if getattr(self, "ws", None) is not None:
            self.ws.close()
        self.proc.terminate()
        self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


ASK = """(() => {
  window.__pvKbFirstText = null;
  const turns = () => document.querySelectorAll('.o_pv_kb_turn');
  const before = turns().length;
  const observer = new MutationObserver(() => {
    const all = turns();
    if (all.length > before) {
      const answer = all[all.length - 1].querySelector('.o_pv_kb_body');
      if (answer && answer.textContent.trim() && !window.__pvKbFirstText) {
        window.__pvKbFirstText = Date.now();
        observer.disconnect();
      }
    }
  });
  observer.observe(document.body, {childList: true, subtree: true, characterData: true});
  const input = document.querySelector('.o_pv_kb_input');
  input.value = %s;
  input.dispatchEvent(new Event('input', {bubbles: true}));
  input.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));
})()"""
TURNS = "document.querySelectorAll('.o_pv_kb_turn').length"
DONE = "(() => { const all = document.querySelectorAll('.o_pv_kb_turn'); const t = all[all.length - 1]; " \
       "return all.length > %d && !!t.dataset.status && t.dataset.status !== 'streaming'; })()"


def ask(browser, question):
    """Ask in the panel and wait until the new turn is answered (not the previous one)."""
    before = browser.eval(TURNS)
    browser.eval(ASK % json.dumps(question))
    browser.wait_for(DONE % before, 90)


def main(odoo_url, db, standin_url, out_dir):
    session = requests.Session()
    session.post(f"{odoo_url}/web/session/authenticate",
                 json={"jsonrpc": "2.0", "params": {"db": db, "login": "admin", "password": "admin"}},
                 timeout=30).raise_for_status()
    browser = Chromium()
    try:
        browser.call("Network.enable")
        browser.call("Network.setCookie", name="session_id", value=session.cookies["session_id"], url=odoo_url)
        browser.call("Page.navigate", url=f"{odoo_url}/odoo/action-pv_kb.action_pv_kb_entry")
        browser.wait_for("!!document.querySelector('.o_pv_kb_systray_toggle')", 90)
        browser.eval("document.querySelector('.o_pv_kb_systray_toggle').click()")
        browser.wait_for("!!document.querySelector('.o_pv_kb_input')")
        shots = [
            ("panel-conflict.png", "Wie hoch ist die Ersatzquote des AMS bei der Blockzeit in der Altersteilzeit?"),
            ("panel-answer.png", "Wie hoch ist der Freibetrag für Sonderzahlungen und welcher Steuersatz gilt?"),
            ("panel-facts.png", "Wie hoch ist das amtliche Kilometergeld für den Privat-Pkw?"),
        ]
        for name, question in shots:
            browser.eval("document.querySelector('.o_pv_kb_new')?.click()")
            time.sleep(0.3)
            ask(browser, question)
            time.sleep(0.5)
            browser.screenshot(f"{out_dir}/{name}")
            print(f"screenshot {out_dir}/{name}")
        # Notbetrieb: the server drops every connection, the panel shows quoted passages and the conflict
        requests.post(f"{standin_url}/_standin/control", timeout=5, json={"action": "set_fault", "mode": "down"})
        browser.eval("document.querySelector('.o_pv_kb_new')?.click()")
        time.sleep(0.3)
        ask(browser, "Wie hoch ist das Kilometergeld?")
        browser.eval("[...document.querySelectorAll('.o_pv_kb_turn')].pop().scrollIntoView()")
        time.sleep(0.5)
        browser.screenshot(f"{out_dir}/panel-notbetrieb.png")
        print(f"screenshot {out_dir}/panel-notbetrieb.png")
        requests.post(f"{standin_url}/_standin/control", timeout=5, json={"action": "reset"})
        browser.eval("document.querySelector('.o_pv_kb_new')?.click()")
        # first text in the panel after the model's first token: stand-in streams with realistic pacing
        requests.post(f"{standin_url}/_standin/control", timeout=5,
                      json={"action": "set_chat_timing", "first_token_ms": 400, "token_ms": 15})
        questions = ["Wie viele Urlaubstage stehen nach dem UrlG zu?", "Was ist die Geringfügigkeitsgrenze 2025?",
                     "Wie lange bekommen Angestellte im Krankenstand volles Entgelt?",
                     "Wie hoch ist das Kilometergeld ab 2025?", "Wann ist der Dienstgeberbeitrag fällig?",
                     "Welcher Sachbezug gilt für ein Elektroauto?", "Wie hoch ist der BV-Beitrag?",
                     "Was gilt für Überstundenzuschläge steuerlich?"]
        latencies = []
        for question in questions:
            before = len(requests.get(f"{standin_url}/_standin/log", timeout=5).json()["first_tokens"])
            ask(browser, question)
            first_tokens = requests.get(f"{standin_url}/_standin/log", timeout=5).json()["first_tokens"]
            shown = browser.eval("window.__pvKbFirstText")
            if len(first_tokens) > before and shown:
                latencies.append(shown - first_tokens[before] * 1000)
        latencies.sort()
        print(f"first text in the panel after the model's first token: median {statistics.median(latencies):.0f} ms, "
              f"max {latencies[-1]:.0f} ms over {len(latencies)} questions")
        cockpit(browser, odoo_url, out_dir)
        fact_cell(browser, odoo_url, out_dir)
    finally:
        browser.close()


def fact_cell(browser, odoo_url, out_dir):
    """An answer from the facts, the chip of its line opened: the entry with the value's cell marked."""
    browser.call("Page.navigate", url=f"{odoo_url}/odoo/action-pv_kb.action_pv_kb_entry")
    browser.wait_for("!!document.querySelector('.o_pv_kb_systray_toggle')", 90)
    browser.eval("document.querySelector('.o_pv_kb_systray_toggle').click()")
    browser.wait_for("!!document.querySelector('.o_pv_kb_input')")
    time.sleep(1.5)     # the panel reopens the last conversation; then a new one
    browser.eval("document.querySelector('.o_pv_kb_new')?.click()")
    browser.wait_for("!document.querySelector('.o_pv_kb_turn')", 30)
    ask(browser, "GFB 2025?")
    chip = ("[...document.querySelectorAll('.o_pv_kb_turn')].pop()"
            ".querySelector('li .o_pv_kb_cite[data-kb-id=\"lb-gfb-01\"]')")
    if not browser.eval(f"!!{chip}"):
        raise RuntimeError("no chip of lb-gfb-01 in the answer: " + str(browser.eval(
            "[...document.querySelectorAll('.o_pv_kb_turn')].pop().innerText")))
    browser.eval(f"{chip}.click()")
    browser.wait_for("!!document.querySelector('.o_form_view td.o_pv_kb_quote_hl')", 60)
    time.sleep(1.0)
    browser.screenshot(f"{out_dir}/entry-facts-cell.png")
    print(f"screenshot {out_dir}/entry-facts-cell.png")


def cockpit(browser, odoo_url, out_dir):
    """Wissensbasis › Übersicht after a health run started from its button, and the open findings."""
    browser.call("Page.navigate", url=f"{odoo_url}/odoo/pv-kb-overview")
    browser.wait_for("!!document.querySelector('.o_pv_kb_run_health:not([disabled])')", 90)
    browser.eval("document.querySelector('.o_pv_kb_run_health').click()")
    browser.wait_for("!!document.querySelector('.o_notification')", 90)
    browser.wait_for("!!document.querySelector('.o_pv_kb_run_health:not([disabled])')", 90)
    browser.eval("document.querySelectorAll('.o_notification_close').forEach(b => b.click())")
    time.sleep(1.5)
    browser.screenshot(f"{out_dir}/cockpit-overview.png")
    print(f"screenshot {out_dir}/cockpit-overview.png")
    browser.call("Page.navigate", url=f"{odoo_url}/odoo/pv-kb-findings")
    browser.wait_for("document.querySelectorAll('.o_list_view .o_data_row, .o_list_view .o_group_header').length > 0", 60)
    browser.eval("[...document.querySelectorAll('.o_list_view .o_group_header')].slice(0, 4).forEach(h => h.click())")
    time.sleep(1.5)
    browser.screenshot(f"{out_dir}/cockpit-findings.png")
    print(f"screenshot {out_dir}/cockpit-findings.png")


if __name__ == "__main__":
    main(*sys.argv[1:5])
