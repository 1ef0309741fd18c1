#!/usr/bin/env bash
# Model bake-off on the demo knowledge base with real CPU models (a benchmark, not part of the tests).
#
#   scripts/bakeoff_demo.sh --url http://127.0.0.1:11500 --chat-models qwen2.5-coder:1.5b[,…]
#                           [--answer-modes text,structured] [--db pv_kb_bakeoff] [--offset N] [--limit N]
#                           [--num-ctx 2048]
#   scripts/bakeoff_demo.sh --prepare       only create/update the database and embed the demo KB
#   --ref NAME: runs of several invocations with the same name are compared together (Empfehlung)
#   --goldset FILE: another gold set over the demo base (default data/demo_kb/goldset.yaml)
#   --part tuning: the tuning part of the gold set instead of the held-out test part (for developing prompts
#                  and checks; the reported figure comes from the default, --part test)
#
# The chat models are served by scripts/local_model.sh at --url (start it first). Creates (or reuses) the
# database with the demo KB only (41 entries: cheap to embed), embeds it with multilingual-e5-small through
# the local stand-in (vectors cached in $PV_KB_STANDIN_CACHE), then runs `pv_kb bakeoff` over the held-out
# questions of the demo gold set (its test part, lib/eval_protocol: 30 of 57) and stores one run per model × mode
# (Wissensbasis › Konfiguration › Bake-off-Läufe).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
db=pv_kb_bakeoff url="" models="" modes=text,structured limit=0 offset=0 num_ctx=2048 prepare=0 ref=() part=test
goldset="$REPO/data/demo_kb/goldset.yaml"
while (($#)); do
    case $1 in
        --db) db=$2; shift ;;
        --url) url=$2; shift ;;
        --chat-models) models=$2; shift ;;
        --answer-modes) modes=$2; shift ;;
        --limit) limit=$2; shift ;;
        --offset) offset=$2; shift ;;
        --num-ctx) num_ctx=$2; shift ;;
        --prepare) prepare=1 ;;
        --ref) ref=(--ref "$2"); shift ;;
        --part) part=$2; shift ;;
        --goldset) goldset=$(realpath "$2"); shift ;;
        *) die "Unknown option $1" ;;
    esac
    shift
done
((prepare)) || [[ -n $url && -n $models ]] || die "Name --url (scripts/local_model.sh) and --chat-models"
ensure_odoo || die "No Odoo under $ODOO_PATH"
ensure_all
if [[ -z $(psql_super -d postgres -c "SELECT 1 FROM pg_database WHERE datname='$db'") ]]; then
    say "Creating database $db"
    odoo_bin -c "$ODOO_CONF" -d "$db" -i pv_kb --stop-after-init --logfile="$LOGDIR/bakeoff-install.log"
else
    odoo_bin -c "$ODOO_CONF" -d "$db" -u pv_kb --stop-after-init --logfile="$LOGDIR/bakeoff-install.log"
fi
start_standin --embed-model multilingual-e5-small=e5 --overhead-ms 0
trap 'kill $STANDIN_PID 2>/dev/null' EXIT
pv_kb_cmd import "$REPO/data/demo_kb/wissensbasis" -d "$db" --log-level=warn | head -3
# this database's stored embedding settings: `pv_kb embed` computes the configured model only
for kv in "embedding_model=multilingual-e5-small" "query_prefix=query: " "passage_prefix=passage: "; do
    psql_super -d "$db" -c "INSERT INTO ir_config_parameter (key, value, create_date, write_date)
        VALUES ('pv_kb.${kv%%=*}', '${kv#*=}', now(), now())
        ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, write_date = now()"
done
pv_kb_cmd embed -d "$db" --log-level=warn --ollama-url "$STANDIN_URL"
kill $STANDIN_PID 2>/dev/null || true
((prepare)) && exit 0
say "Bake-off: $models × $modes against $url (num_ctx $num_ctx)"
pv_kb_cmd bakeoff --goldset "$goldset" --part "$part" --limit "$limit" --offset "$offset" -d "$db" \
    --log-level=warn --ollama-url "$url" --embedding-model multilingual-e5-small --query-prefix "query: " \
    --passage-prefix "passage: " --chat-models "$models" --answer-modes "$modes" --num-ctx "$num_ctx" \
    --answer-time-limit 300 --read-timeout 300 "${ref[@]}"
