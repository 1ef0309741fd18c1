#!/usr/bin/env bash
# Screenshots of the bake-off runs (graph, pivot, list, one run) from the database of scripts/bakeoff_demo.sh.
#   scripts/screenshot_bakeoff.sh [--db pv_kb_bakeoff] [--ref BAKEOFF_REF]   (REF: only that bake-off's runs)
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
db=pv_kb_bakeoff ref=""
while (($#)); do
    case $1 in
        --db) db=$2; shift ;;
        --ref) ref=$2; shift ;;
        *) die "Unknown option $1" ;;
    esac
    shift
done
ensure_odoo || die "No Odoo under $ODOO_PATH"
ensure_all
oport=$(free_port)
odoo_bin shell -c "$ODOO_CONF" -d $db --no-http --log-level=warn >/dev/null <<PY
if not env["res.lang"].search_count([("code", "=", "de_DE"), ("active", "=", True)]):
    env["base.language.install"].create({"lang_ids": [(6, 0, env["res.lang"].with_context(active_test=False).search([("code", "=", "de_DE")]).ids)]}).lang_install()
env.ref("base.user_admin").write({"lang": "de_DE", "tz": "Europe/Vienna"})
env.cr.commit()
PY
"$PY" "$ODOO_PATH/odoo-bin" -c "$ODOO_CONF" -d $db --db-filter="^$db\$" --http-port "$oport" \
    --logfile="$LOGDIR/shots-bakeoff-odoo.log" &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
ready=0
for _ in $(seq 120); do curl -sf "http://127.0.0.1:$oport/web/login" >/dev/null && { ready=1; break; }; sleep 0.5; done
((ready)) || die "Odoo does not answer on port $oport, see $LOGDIR/shots-bakeoff-odoo.log"
mkdir -p "$REPO/docs/screenshots"
"$PY" "$REPO/scripts/screenshot_bakeoff.py" "http://127.0.0.1:$oport" $db "$REPO/docs/screenshots" ${ref:+"$ref"}
