#!/usr/bin/env bash
# End to end: the embedding cron in a real threaded Odoo with a low limit_time_real (10 s) and a slow model
# server (1 s per request, one poisoned section). The backlog must be finished over several cron runs,
# without any "virtual real time limit" or server reload, with the poisoned section skipped and its error kept.
# Used by scripts/test.sh on the test database. Prints "e2e cron: PASS …" or "e2e cron: FAIL …".
#   scripts/e2e_cron.sh DB
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
db=${1:?database}
work=$(mktemp -d)
odoo_pid=""   # the Odoo process itself (started directly, not through the odoo_bin function, so that kill reaches it)
cleanup() {
    [[ -n $odoo_pid ]] && kill "$odoo_pid" 2>/dev/null && { wait "$odoo_pid" 2>/dev/null || true; }
    [[ -n ${STANDIN_PID:-} ]] && kill "$STANDIN_PID" 2>/dev/null
    psql_super -d "$db" -c "DELETE FROM pv_kb_batch; DELETE FROM pv_kb_entry;" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
limit=10
start_standin --embed-model cron-embed=hash --overhead-ms 0
control() { curl -fsS -X POST "$STANDIN_URL/_standin/control" -d "$1" >/dev/null; }
control '{"action": "set_embed_timing", "ms": 1000}'
control '{"action": "set_fault", "mode": "poison", "marker": "GIFTIG", "paths": ["/api/embed"]}'
"$PY" "$REPO/scripts/gen_synthetic_kb.py" "$work/kb" --entries 12 --seed 11 --prefix cron >/dev/null
pv_kb_cmd import "$work/kb/wissensbasis" -d "$db" --log-level=warn >/dev/null || { echo "e2e cron: FAIL (import)"; exit 1; }
psql_super -d "$db" >/dev/null <<SQL
INSERT INTO ir_config_parameter (key, value, create_date, write_date)
VALUES ('pv_kb.ollama_url', '$STANDIN_URL', now(), now()), ('pv_kb.embedding_model', 'cron-embed', now(), now()),
       ('pv_kb.passage_prefix', '', now(), now()), ('pv_kb.embed_batch_size', '4', now(), now())
ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value;
UPDATE pv_kb_chunk SET text = text || ' GIFTIG' WHERE id = (SELECT min(id) FROM pv_kb_chunk);
UPDATE ir_cron SET active = true, nextcall = now() AT TIME ZONE 'UTC'
 WHERE id = (SELECT res_id FROM ir_model_data WHERE module = 'pv_kb' AND name = 'ir_cron_pv_kb_embed');
SQL
total=$(psql_super -d "$db" -c "SELECT count(*) FROM pv_kb_chunk")
log=$work/odoo.log
# Odoo's stderr apart: a daemon thread (the cron thread waiting on its connection) that the stop below interrupts
# may print half a line at interpreter exit; it is shown with the log when the check fails
# ODOO_NOTIFY_CRON_CHANGES: Odoo wakes its cron thread at once for a job rescheduled "as soon as possible"
# (without it the next run starts within a minute)
ODOO_NOTIFY_CRON_CHANGES=1 "$PY" "$ODOO_PATH/odoo-bin" -c "$ODOO_CONF" -d "$db" --http-port "$(free_port)" --max-cron-threads 1 \
    --limit-time-real "$limit" --limit-time-real-cron 0 --log-level=info --logfile "$log" 2>>"$work/odoo.stderr" &
odoo_pid=$!
left=$total
for i in $(seq 600); do
    # wake the cron thread (it polls once a minute otherwise); it listens on the postgres database
    ((i % 10 == 1)) && psql_super -d postgres -c "NOTIFY cron_trigger, '$db'" >/dev/null 2>&1
    left=$(psql_super -d "$db" -c "SELECT count(*) FROM pv_kb_chunk
                                    WHERE embedding_model IS DISTINCT FROM 'cron-embed' AND embedding_error IS NULL")
    ((left == 0)) && break
    sleep 0.5
done
kill "$odoo_pid" 2>/dev/null; wait "$odoo_pid" 2>/dev/null || true; odoo_pid=""
failed=$(psql_super -d "$db" -c "SELECT count(*) FROM pv_kb_chunk WHERE embedding_error LIKE '%500%' AND embedding IS NULL")
cron_id=$(psql_super -d "$db" -c "SELECT res_id FROM ir_model_data WHERE module = 'pv_kb' AND name = 'ir_cron_pv_kb_embed'")
runs=$(grep -cE "Job .* \($cron_id\) starting" "$log" || true)
limits=$(grep -cE "virtual real time limit|Initiating server reload" "$log" || true)
summary="$total sections, $runs cron runs, $failed skipped with their error, $left left, $limits limit warnings"
if ((left == 0 && failed == 1 && runs >= 2 && limits == 0)); then
    echo "e2e cron: PASS ($summary; limit_time_real ${limit} s, 1 s per model request)"
else
    echo "e2e cron: FAIL ($summary)"
    grep -E "pv_kb|limit|reload|Job" "$log" | tail -30
    tail -20 "$work/odoo.stderr" 2>/dev/null
    exit 1
fi
