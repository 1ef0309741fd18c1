#!/usr/bin/env bash
# One command for a newcomer: installs everything, creates the database with pv_kb and the demo
# knowledge base, then serves Odoo on http://127.0.0.1:$PV_KB_HTTP_PORT (login admin / admin).
#
#   scripts/setup.sh               set up and serve (Ctrl+C stops Odoo; PostgreSQL keeps running)
#   scripts/setup.sh --no-serve    set up only
#   scripts/setup.sh --stop        stop PostgreSQL
# Settings: see scripts/common.sh (ODOO_PATH, PV_KB_HOME, PV_KB_PGPORT, ...); PV_KB_DB (default pv_kb) names the database.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
PV_KB_DB=${PV_KB_DB:-pv_kb}

serve=1
case "${1:-}" in
    --no-serve) serve=0 ;;
    --stop) [[ -x $PY ]] || die "No environment under $VENV: nothing is running."; stop_postgres; say "PostgreSQL stopped."; exit 0 ;;
    "") ;;
    *) die "Unknown option: $1 (allowed: --no-serve, --stop)" ;;
esac

ensure_odoo || die "No Odoo 19.0 under ODOO_PATH=$ODOO_PATH. Put the Odoo 19.0 source tree there (see README) and start again."
ensure_all

db_exists() { [[ -n $(psql_super -d postgres -c "SELECT 1 FROM pg_database WHERE datname='$PV_KB_DB'") ]]; }
if ! db_exists; then
    say "Creating database $PV_KB_DB with pv_kb (takes 1–2 minutes)"
    odoo_bin -c "$ODOO_CONF" -d "$PV_KB_DB" -i pv_kb --stop-after-init --load-language=de_DE \
        --logfile="$LOGDIR/setup-install.log" || die "Installation failed, see $LOGDIR/setup-install.log"
    odoo_bin shell -c "$ODOO_CONF" -d "$PV_KB_DB" --no-http --log-level=warn >/dev/null <<'PY'
env.ref("base.user_admin").write({"lang": "de_DE", "tz": "Europe/Vienna"})
env.cr.commit()
PY
else
    say "Database $PV_KB_DB exists, updating pv_kb"
    odoo_bin -c "$ODOO_CONF" -d "$PV_KB_DB" -u pv_kb --stop-after-init --logfile="$LOGDIR/setup-update.log" \
        || die "Update failed, see $LOGDIR/setup-update.log"
fi
say "Importing the demo knowledge base"
pv_kb_cmd import "$REPO/data/demo_kb/wissensbasis" -d "$PV_KB_DB" --log-level=warn \
    || die "Import of the demo knowledge base failed"

if ((serve)); then
    say "Odoo runs at http://127.0.0.1:$PV_KB_HTTP_PORT (user admin / password admin). Ctrl+C stops it."
    exec "$PY" "$ODOO_PATH/odoo-bin" -c "$ODOO_CONF" -d "$PV_KB_DB" --db-filter="^$PV_KB_DB\$"
fi
say "Done. Start with: scripts/setup.sh"
