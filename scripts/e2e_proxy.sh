#!/usr/bin/env bash
# End to end: Odoo with --workers 2 behind nginx configured with exactly the rules of Odoo's documented proxy
# configuration (scripts/odoo_nginx.conf.in: /websocket to the gevent port, the rest to the HTTP port, nothing
# for pv_kb). Through the proxy the panel's stream (/websocket/pv_kb/ask/stream) must reach the gevent worker
# and stream an answer (the stand-in writes it token by token); straight to the HTTP port the same request must
# not hold the HTTP worker: it returns at once and the answer is polled. Prints "e2e proxy: PASS …" or
# "e2e proxy: FAIL …".
#   scripts/e2e_proxy.sh DB
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
db=${1:?database}
work=$(mktemp -d)
odoo_pid="" NGINX_PID="" STANDIN_PID=""
cleanup() {
    for pid in $NGINX_PID $odoo_pid $STANDIN_PID; do kill "$pid" 2>/dev/null && { wait "$pid" 2>/dev/null || true; }; done
    psql_super -d "$db" -c "DELETE FROM pv_kb_batch; DELETE FROM pv_kb_entry; DELETE FROM pv_kb_query;" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
command -v nginx >/dev/null || { echo "e2e proxy: FAIL (nginx is not installed: scripts/setup.sh installs it)"; exit 1; }
start_standin --embed-model hash-embed=hash --overhead-ms 0
curl -fsS -X POST "$STANDIN_URL/_standin/control" \
     -d '{"action": "set_chat_timing", "first_token_ms": 300, "token_ms": 20}' >/dev/null
psql_super -d "$db" -c "INSERT INTO ir_config_parameter (key, value, create_date, write_date)
                        SELECT k, v, now(), now() FROM (VALUES ('pv_kb.ollama_url', '$STANDIN_URL'),
                            ('pv_kb.embedding_model', 'hash-embed'), ('pv_kb.chat_model', 'standin-chat'),
                            ('pv_kb.query_prefix', ''), ('pv_kb.passage_prefix', '')) AS p(k, v)
                        ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value" >/dev/null
pv_kb_cmd import "$REPO/data/demo_kb/wissensbasis" -d "$db" --log-level=warn >/dev/null 2>&1 \
    || { echo "e2e proxy: FAIL (import)"; exit 1; }
pv_kb_cmd embed -d "$db" --log-level=warn >/dev/null 2>&1 || true
first=$(psql_super -d "$db" -c "SELECT COALESCE(max(id), 0) FROM pv_kb_query")   # this check's questions only
port=$(free_port); gport=$(free_port); sport=$(free_port)
"$PY" "$ODOO_PATH/odoo-bin" -c "$ODOO_CONF" -d "$db" --workers 2 --max-cron-threads 0 --http-port "$port" \
    --gevent-port "$gport" --proxy-mode --log-level=info --logfile "$work/odoo.log" &
odoo_pid=$!
start_odoo_nginx "$work/nginx" "$sport" "$port" "$gport"
up=0
for _ in $(seq 120); do
    if curl -fsS "http://127.0.0.1:$port/web/health" >/dev/null 2>&1 \
            && curl -fksS "https://127.0.0.1:$sport/websocket/health" >/dev/null 2>&1; then up=1; break; fi
    sleep 0.5
done
verdict=$("$PY" - "https://127.0.0.1:$sport" "http://127.0.0.1:$port" "$db" 2>&1 <<'PY'
import json, sys, time
import requests, urllib3
urllib3.disable_warnings()
proxy, direct, db = sys.argv[1:4]


def login(url):
    s = requests.Session()
    s.verify = False
    s.trust_env = False      # no CA bundle or proxy from the environment for this local test
    r = s.post(f"{url}/web/session/authenticate", json={"jsonrpc": "2.0", "method": "call",
               "params": {"db": db, "login": "admin", "password": "admin"}}, timeout=60)
    assert not r.json().get("error"), r.text[:300]
    return s, s.get(f"{url}/odoo", timeout=60).text.split('csrf_token: "', 1)[1].split('"', 1)[0]


# through the proxy: the stream reaches the gevent worker and streams
s, token = login(proxy)
assert s.get(f"{proxy}/websocket/pv_kb/served", timeout=30).json() == {"served": "evented"}
events = []
with s.post(f"{proxy}/websocket/pv_kb/ask/stream", json={"question": "Wie hoch ist das Kilometergeld?",
            "csrf_token": token}, stream=True, timeout=120) as resp:
    assert resp.status_code == 200, resp.status_code
    events = [json.loads(line) for line in resp.iter_lines() if line]
# "ping" lines keep the connection alive whenever the stream waits 0.5 s (on a busy machine also before "meta"
# or after "final"); the order of what the answer sends is checked without them
content = [e for e in events if e["type"] != "ping"]
kinds = [e["type"] for e in content]
final = content[-1]
assert kinds[0] == "meta" and final["type"] == "final" and kinds.count("delta") > 3, kinds
assert final["status"] in ("beantwortet", "unsicher") and final["citations"], final
# straight to the HTTP port: the request returns at once, the answer is polled
s2, token2 = login(direct)
assert s2.get(f"{direct}/websocket/pv_kb/served", timeout=30).json() == {"served": "polled"}
t0 = time.monotonic()
lines = s2.post(f"{direct}/websocket/pv_kb/ask/stream", json={"question": "Wie hoch ist das Kilometergeld?",
                "csrf_token": token2}, timeout=60).text.splitlines()
held = time.monotonic() - t0
job = json.loads(lines[0])
assert job["type"] == "poll", lines
for _ in range(600):
    state = s2.post(f"{direct}/pv_kb/ask/poll", json={"jsonrpc": "2.0", "method": "call",
                    "params": {"job_id": job["job_id"]}}, timeout=30).json()["result"]
    if state["done"]:
        break
    time.sleep(0.2)
polled = state["events"][-1]
assert polled["type"] == "final" and polled["status"] in ("beantwortet", "unsicher"), state
print(f"via nginx: {kinds.count('delta')} deltas, {final['status']}, {len(final['citations'])} citations; "
      f"straight to the HTTP port: request held {held:.2f} s, polled answer {polled['status']}")
PY
) && ok=1 || ok=0
served=$(psql_super -d "$db" -c "SELECT string_agg(served_by, ',' ORDER BY id) FROM pv_kb_query WHERE id > $first" 2>/dev/null)
kill "$NGINX_PID" 2>/dev/null; wait "$NGINX_PID" 2>/dev/null || true; NGINX_PID=""
kill "$odoo_pid" 2>/dev/null; wait "$odoo_pid" 2>/dev/null || true; odoo_pid=""
broken=$(grep -cE "Traceback" "$work/odoo.log" || true)
if ((up && ok && broken == 0)) && [[ $served == "evented,polled" ]]; then
    echo "e2e proxy: PASS (--workers 2 behind nginx with Odoo's documented rules only: $verdict; log: $served)"
else
    echo "e2e proxy: FAIL (up $up, errors in log $broken, served $served: $verdict)"
    grep -E "ERROR|Traceback" "$work/odoo.log" | tail -20
    tail -5 "$work/nginx/odoo.error.log" 2>/dev/null
    exit 1
fi
