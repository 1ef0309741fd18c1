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
    --stop) [[ -x $PY ]] || die "Keine Umgebung unter $VENV: es läuft nichts."; stop_postgres; say "PostgreSQL gestoppt."; exit 0 ;;
    "") ;;
    *) die "Unbekannte Option: $1 (erlaubt: --no-serve, --stop)" ;;
esac

ensure_odoo || die "Kein Odoo 19.0 unter ODOO_PATH=$ODOO_PATH. Bitte den Odoo-19.0-Quellbaum dorthin legen (siehe README) und erneut starten."
ensure_all

db_exists() { [[ -n $(psql_super -d postgres -c "SELECT 1 FROM pg_database WHERE datname='$PV_KB_DB'") ]]; }
if ! db_exists; then
    say "Datenbank $PV_KB_DB wird mit pv_kb angelegt (dauert 1–2 Minuten)"
    odoo_bin -c "$ODOO_CONF" -d "$PV_KB_DB" -i pv_kb --stop-after-init --load-language=de_DE \
        --logfile="$LOGDIR/setup-install.log" || die "Installation fehlgeschlagen, siehe $LOGDIR/setup-install.log"
    odoo_bin shell -c "$ODOO_CONF" -d "$PV_KB_DB" --no-http --log-level=warn >/dev/null <<'PY'
env.ref("base.user_admin").write({"lang": "de_DE", "tz": "Europe/Vienna"})
env.cr.commit()
PY
else
    say "Datenbank $PV_KB_DB vorhanden, pv_kb wird aktualisiert"
    odoo_bin -c "$ODOO_CONF" -d "$PV_KB_DB" -u pv_kb --stop-after-init --logfile="$LOGDIR/setup-update.log" \
        || die "Aktualisierung fehlgeschlagen, siehe $LOGDIR/setup-update.log"
fi
say "Demo-Wissensbasis wird importiert"
pv_kb_cmd import "$REPO/data/demo_kb/wissensbasis" -d "$PV_KB_DB" --log-level=warn \
    || die "Import der Demo-Wissensbasis fehlgeschlagen"

if ((serve)); then
    say "Odoo läuft auf http://127.0.0.1:$PV_KB_HTTP_PORT (Benutzer admin / Passwort admin). Beenden mit Strg+C."
    exec "$PY" "$ODOO_PATH/odoo-bin" -c "$ODOO_CONF" -d "$PV_KB_DB" --db-filter="^$PV_KB_DB\$"
fi
say "Fertig. Starten mit: scripts/setup.sh"
