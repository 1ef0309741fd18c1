"""Many users asking at once, against a running Odoo (run by ``scripts/bench/run.sh load``).

    bench_load.py --url https://127.0.0.1:8443 --db DB --users 20 \
                  --dsn "host=127.0.0.1 port=55432 dbname=DB user=odoo password=odoo" --label "workers 4, nginx"

Every asker logs in with a session of its own (users ``pv_kb_load_01`` …, password = login), then all
send their question at the same moment to the panel's stream route (``/websocket/pv_kb/ask/stream``) on
``--stream-url`` (default ``--url``: as the panel does, through whatever is in front of Odoo). An answer the
server hands back for polling (``{"type": "poll"}``: the request reached a prefork HTTP worker) is followed
as the panel follows it (``/pv_kb/ask/poll`` every ``interval_ms``). Meanwhile a probe asks
``/web/webclient/version_info`` on ``--url`` every 200 ms (an ordinary backend request of somebody
else), and a monitor counts the database's connections every 100 ms. Bounded: each answer gives up
after ``--timeout`` seconds, the whole run after the last asker. Prints one block of numbers, with how the
question log says the answers were served.
"""
import argparse
import json
import statistics
import threading
import time

import psycopg2
import requests
import urllib3

urllib3.disable_warnings()

QUESTIONS = [
    "Wie hoch ist der Freibetrag für sonstige Bezüge?",
    "Wie hoch ist das Kilometergeld?",
    "Was gilt für den Sachbezug beim Dienstwagen?",
    "Wie wird die Urlaubsersatzleistung berechnet?",
    "Welche Überstundenzuschläge sind steuerfrei?",
]


STREAM_PATH = "/websocket/pv_kb/ask/stream"


def login(url, db, user):
    session = requests.Session()
    session.verify = False       # the bench's nginx has a self-signed certificate
    session.trust_env = False    # (a CA bundle from the environment would override that)
    response = session.post(f"{url}/web/session/authenticate", json={
        "jsonrpc": "2.0", "method": "call", "params": {"db": db, "login": user, "password": user}}, timeout=60)
    response.raise_for_status()
    if response.json().get("error"):
        raise RuntimeError(f"login {user}: {response.json()['error']}")
    page = session.get(f"{url}/odoo", timeout=60).text
    token = page.split('csrf_token: "', 1)[1].split('"', 1)[0]
    return session, token


def percentile(values, share):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(share * len(ordered))) - 1))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--stream-url")
    parser.add_argument("--db", required=True)
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    stream_url = args.stream_url or args.url

    sessions = [login(args.url, args.db, f"pv_kb_load_{n:02d}") for n in range(1, args.users + 1)]
    probe_session, _token = login(args.url, args.db, "pv_kb_load_probe")
    start = threading.Barrier(args.users + 1)
    results = [None] * args.users
    polled = [False] * args.users
    with psycopg2.connect(args.dsn) as conn, conn.cursor() as cr:
        cr.execute("SELECT COALESCE(max(id), 0) FROM pv_kb_query")
        last_query = cr.fetchone()[0]
    stop = threading.Event()
    probe_ms, connections = [], []

    def follow_polled(session, job, t0, deadline):
        """(first text, final event or None, error) of an answer fetched by polling, as the panel does."""
        first = None
        while time.monotonic() < deadline:
            time.sleep(job.get("interval_ms", 500) / 1000)
            reply = session.post(f"{args.url}/pv_kb/ask/poll", timeout=60, json={
                "jsonrpc": "2.0", "method": "call", "params": {"job_id": job["job_id"]}}).json()
            if reply.get("error"):
                return first, None, "poll error"
            for event in reply["result"]["events"]:
                if event["type"] == "snapshot" and event["text"] and first is None:
                    first = time.monotonic() - t0
                elif event["type"] == "final":
                    return first, event, None
                elif event["type"] == "error":
                    return first, None, event.get("message", "error")
        return first, None, "timeout"

    def ask(n):
        session, token = sessions[n]
        start.wait()
        t0 = time.monotonic()
        first = final = None
        error = None
        try:
            with session.post(f"{stream_url}{STREAM_PATH}", stream=True, timeout=args.timeout, json={
                    "question": QUESTIONS[n % len(QUESTIONS)], "csrf_token": token}) as response:
                if response.status_code != 200:
                    error = f"HTTP {response.status_code}"
                else:
                    for line in response.iter_lines():
                        if not line:
                            continue
                        event = json.loads(line)
                        if event["type"] == "poll":
                            polled[n] = True
                            first, end, error = follow_polled(session, event, t0, t0 + args.timeout)
                            event = end or {"type": "none"}
                        if event["type"] == "delta" and first is None:
                            first = time.monotonic() - t0
                        elif event["type"] == "final":
                            final = time.monotonic() - t0
                            if event["status"] not in ("beantwortet", "unsicher", "verweigert"):
                                error = f"status {event['status']}"
                        elif event["type"] == "error":
                            error = event.get("message", "error")
        except requests.RequestException as exc:
            error = type(exc).__name__
        if final is None and error is None:
            error = "no final event"
        results[n] = {"first": first, "total": final, "error": error}

    def probe():
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                probe_session.post(f"{args.url}/web/webclient/version_info", json={
                    "jsonrpc": "2.0", "method": "call", "params": {}}, timeout=60).raise_for_status()
                probe_ms.append((time.monotonic() - t0) * 1000)
            except requests.RequestException:
                probe_ms.append(60_000.0)
            stop.wait(0.2)

    def monitor():
        conn = psycopg2.connect(args.dsn)
        conn.autocommit = True
        with conn.cursor() as cr:
            while not stop.is_set():
                cr.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                           [args.db])
                connections.append(cr.fetchone()[0])
                stop.wait(0.1)
        conn.close()

    askers = [threading.Thread(target=ask, args=(n,)) for n in range(args.users)]
    helpers = [threading.Thread(target=probe), threading.Thread(target=monitor)]
    for thread in askers + helpers:
        thread.start()
    time.sleep(0.5)            # the probe and the monitor see the idle state first
    started = time.monotonic()
    start.wait()
    for thread in askers:
        thread.join()
    wall = time.monotonic() - started
    stop.set()
    for thread in helpers:
        thread.join()

    done = [r for r in results if r and r["error"] is None]
    errors = [r["error"] for r in results if r and r["error"] is not None]
    firsts = [r["first"] for r in done if r["first"] is not None]
    totals = [r["total"] for r in done]
    with psycopg2.connect(args.dsn) as conn, conn.cursor() as cr:
        cr.execute("SELECT served_by, count(*) FROM pv_kb_query WHERE id > %s GROUP BY 1 ORDER BY 1", [last_query])
        served = ", ".join(f"{how or 'none'} {count}" for how, count in cr.fetchall())
    print(f"== {args.label or 'load'}: {args.users} askers, stream via {stream_url}{STREAM_PATH}")
    print(f"served (question log): {served}; answers polled: {sum(polled)}")
    print(f"completed {len(done)}/{args.users}, errors {len(errors)} {sorted(set(errors)) if errors else ''}")
    if firsts:
        print(f"first text  median {statistics.median(firsts):.2f} s, max {max(firsts):.2f} s")
    if totals:
        print(f"total       median {statistics.median(totals):.2f} s, max {max(totals):.2f} s (all done in {wall:.1f} s)")
    print(f"DB connections: peak {max(connections) if connections else 0} (idle before: "
          f"{connections[0] if connections else 0})")
    print(f"backend probe ({len(probe_ms)} requests): median {statistics.median(probe_ms):.0f} ms, "
          f"p95 {percentile(probe_ms, 0.95):.0f} ms, max {max(probe_ms):.0f} ms")
    return 0 if not errors else 1


if __name__ == "__main__":
    raise SystemExit(main())
