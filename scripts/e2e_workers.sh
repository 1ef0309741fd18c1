#!/usr/bin/env bash
# End to end: Odoo in multi-process mode (--workers 2) on the test database. The gevent worker must start
# cleanly (it died at start before zope.interface was pinned), and a streamed answer must come through the
# gevent port, as a reverse proxy routes /pv_kb/ask/stream there (README, "Betrieb"). No model server:
# the answer is the Notbetrieb's. Prints "e2e workers: PASS …" or "e2e workers: FAIL …".
#   scripts/e2e_workers.sh DB
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
db=${1:?database}
work=$(mktemp -d)
odoo_pid=""   # the Odoo process itself (started directly, not through the odoo_bin function, so that kill reaches it)
cleanup() {
    [[ -n $odoo_pid ]] && kill "$odoo_pid" 2>/dev/null && { wait "$odoo_pid" 2>/dev/null || true; }
    psql_super -d "$db" -c "DELETE FROM pv_kb_batch; DELETE FROM pv_kb_entry;" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
pv_kb_cmd import "$REPO/data/demo_kb/wissensbasis" -d "$db" --log-level=warn >/dev/null \
    || { echo "e2e workers: FAIL (import)"; exit 1; }
psql_super -d "$db" -c "INSERT INTO ir_config_parameter (key, value, create_date, write_date)
                        VALUES ('pv_kb.ollama_url', 'http://127.0.0.1:$(free_port)', now(), now())
                        ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value" >/dev/null
port=$(free_port); gport=$(free_port)
"$PY" "$ODOO_PATH/odoo-bin" -c "$ODOO_CONF" -d "$db" --workers 2 --max-cron-threads 0 --http-port "$port" --gevent-port "$gport" \
    --log-level=info --logfile "$work/odoo.log" &
odoo_pid=$!
up=0
for _ in $(seq 120); do
    if curl -fsS "http://127.0.0.1:$port/web/health" >/dev/null 2>&1 \
            && curl -fsS "http://127.0.0.1:$gport/web/health" >/dev/null 2>&1; then up=1; break; fi
    sleep 0.5
done
verdict=$("$PY" - "http://127.0.0.1:$port" "http://127.0.0.1:$gport" "$db" 2>&1 <<'PY'
import json, sys
import requests
http, gevent, db = sys.argv[1:4]
s = requests.Session()
r = s.post(f"{http}/web/session/authenticate", json={"jsonrpc": "2.0", "method": "call",
           "params": {"db": db, "login": "admin", "password": "admin"}}, timeout=60)
assert not r.json().get("error"), r.text[:300]
token = s.get(f"{http}/odoo", timeout=60).text.split('csrf_token: "', 1)[1].split('"', 1)[0]
events = []
with s.post(f"{gevent}/pv_kb/ask/stream", json={"question": "Wie hoch ist das Kilometergeld?", "csrf_token": token},
            stream=True, timeout=60) as resp:
    assert resp.status_code == 200, resp.status_code
    events = [json.loads(line) for line in resp.iter_lines() if line]
final = [e for e in events if e["type"] == "final"]
assert final and final[0]["citations"], events[-3:]
print(f"status {final[0]['status']}, {len(final[0]['citations'])} citations")
PY
) && ok=1 || ok=0
kill "$odoo_pid" 2>/dev/null; wait "$odoo_pid" 2>/dev/null || true; odoo_pid=""
gevent_ok=$(grep -c "Evented Service (longpolling) running" "$work/odoo.log" || true)
broken=$(grep -cE "DistributionNotFound|Traceback" "$work/odoo.log" || true)
if ((up && ok && gevent_ok >= 1 && broken == 0)); then
    echo "e2e workers: PASS (--workers 2, gevent worker up, streamed answer via the gevent port: $verdict)"
else
    echo "e2e workers: FAIL (up $up, gevent started $gevent_ok, errors in log $broken: $verdict)"
    grep -E "ERROR|Traceback|DistributionNotFound|Evented" "$work/odoo.log" | tail -20
    exit 1
fi
