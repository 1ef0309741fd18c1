#!/usr/bin/env bash
# Screenshots of the chat panel from a real run (docs/screenshots/*.png) and the panel's first-text latency.
#   scripts/screenshots.sh
# A database pv_kb_shots with the demo KB, the Ollama stand-in (multilingual-e5-small, rule-following chat),
# Odoo on a free port, headless Chromium driven by scripts/screenshots.py.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_odoo || die "No Odoo under $ODOO_PATH"
ensure_all
db=${PV_KB_SHOTS_DB:-pv_kb_shots}   # a second checkout taking screenshots beside the first needs its own
oport=$(free_port)
start_standin --embed-model multilingual-e5-small=e5 --overhead-ms 0
pids=("$STANDIN_PID")
trap 'kill "${pids[@]}" 2>/dev/null' EXIT
psql_super -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null
odoo_bin -c "$ODOO_CONF" -d $db -i pv_kb --stop-after-init --load-language=de_DE --logfile="$LOGDIR/shots-install.log"
odoo_bin shell -c "$ODOO_CONF" -d $db --no-http --log-level=warn >/dev/null <<PY
env.ref("base.user_admin").write({"lang": "de_DE", "tz": "Europe/Vienna"})
params = env["ir.config_parameter"].sudo()
for key, value in {"ollama_url": "$STANDIN_URL", "embedding_model": "multilingual-e5-small",
                   "chat_model": "standin-chat", "query_prefix": "query: ", "passage_prefix": "passage: ",
                   "gate_dense_floor": "0.84"}.items():
    params.set_param("pv_kb." + key, value)
importer = env["pv.kb.importer"]
importer._run(importer._read_source(path="$REPO/data/demo_kb/wissensbasis"), source_name="demo")
env["pv.kb.chunk"]._embed_pending()
# e5-small's cosine scale: the planted near-duplicate of the demo KB has 0.961, the closest other pair 0.952
params.set_param("pv_kb.health_duplicate_threshold", "0.955")
env["pv.kb.health.run"]._run_health_check(trigger="manual")
env.cr.commit()
PY
# the process itself in the background (not the odoo_bin function's subshell), so that the trap stops it
"$PY" "$ODOO_PATH/odoo-bin" -c "$ODOO_CONF" -d $db --db-filter="^$db\$" --http-port "$oport" \
    --logfile="$LOGDIR/shots-odoo.log" &
pids+=($!)
ready=0
for _ in $(seq 120); do curl -sf "http://127.0.0.1:$oport/web/login" >/dev/null && { ready=1; break; }; sleep 0.5; done
((ready)) || die "Odoo does not answer on port $oport, see $LOGDIR/shots-odoo.log"
shots=${PV_KB_SHOTS_DIR:-$REPO/docs/screenshots}   # another folder leaves the documented screenshots as they are
mkdir -p "$shots"
"$PY" "$REPO/scripts/screenshots.py" "http://127.0.0.1:$oport" $db "$STANDIN_URL" "$shots"
