#!/usr/bin/env bash
# End to end: a batch nobody has seen (generated now, random seed) imports through the command line and
# through the wizard with identical results.  Used by scripts/test.sh on the test database (pv_kb installed);
# prints "e2e import: PASS" or "e2e import: FAIL …" and exits accordingly.
#   scripts/e2e_import.sh DB
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
db=${1:?database}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seed=${PV_KB_E2E_SEED:-$RANDOM}
"$PY" "$REPO/scripts/gen_synthetic_kb.py" "$work/kb" --entries 60 --seed "$seed" --prefix "ext$seed" --dangling 2 \
    --zip "$work/batch.zip" >/dev/null

fingerprint() {
    psql_super -d "$db" -c "
        SELECT md5(coalesce(string_agg(e.kb_id || '|' || e.content_hash || '|' || e.active || '|' || coalesce(e.dangling_refs, '')
                                       || '|' || (SELECT string_agg(c.content_hash || ':' || c.position, ',' ORDER BY c.position)
                                                    FROM pv_kb_chunk c WHERE c.entry_id = e.id), ';' ORDER BY e.kb_id), '')),
               (SELECT count(*) FROM pv_kb_entry), (SELECT count(*) FROM pv_kb_chunk),
               (SELECT string_agg(state || ':' || count_new || '/' || count_changed || '/' || count_rejected || '/' || count_warnings, ',') FROM pv_kb_batch),
               (SELECT md5(coalesce(string_agg(file || level || code || message, ';' ORDER BY file, code, message), '')) FROM pv_kb_batch_issue)
          FROM pv_kb_entry e"
}
reset() { psql_super -d "$db" -c "DELETE FROM pv_kb_batch; DELETE FROM pv_kb_entry;" >/dev/null; }

reset
# set -e would end the script at a failing command before it can report: exit codes are taken explicitly
if pv_kb_cmd import "$work/batch.zip" -d "$db" --log-level=warn >"$work/cli.txt" 2>&1; then cli_rc=0; else cli_rc=$?; fi
cli=$(fingerprint)
reset
cat >"$work/wizard.py" <<PY
import base64
with open("$work/batch.zip", "rb") as fh:
    data = base64.b64encode(fh.read())
wizard = env["pv.kb.import.wizard"].create({"zip_file": data, "zip_filename": "batch.zip"})
wizard.action_check()
assert wizard.can_apply, wizard.report
wizard.action_apply()
env.cr.commit()
PY
odoo_bin shell -c "$ODOO_CONF" -d "$db" --no-http --log-level=warn <"$work/wizard.py" >"$work/wizard.txt" 2>&1 || true
wizard=$(fingerprint)
reset
if [[ $cli_rc -eq 0 && -n $cli && $cli == "$wizard" ]]; then
    echo "e2e import: PASS (seed $seed: $(cut -d'|' -f2,3 <<<"$cli" | tr '|' ' ') entries/chunks, identical via CLI and wizard)"
else
    echo "e2e import: FAIL (seed $seed)"; echo "cli:    $cli (exit $cli_rc)"; echo "wizard: $wizard"
    tail -5 "$work/cli.txt" "$work/wizard.txt"
    exit 1
fi
