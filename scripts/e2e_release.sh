#!/usr/bin/env bash
# End to end: the release ZIP (scripts/release.py) alone installs into a fresh database, imports its demo
# knowledge base and, with no model server, answers an explaining question in Notbetrieb and the demo value
# question from the fact table, citing retrieved entries only.
# Odoo sees only its own addons and the unpacked ZIP, so nothing of the repository can stand in for a missing
# file. Prints "e2e release: PASS …" or "e2e release: FAIL …".
#   scripts/e2e_release.sh [TEMPLATE]
# TEMPLATE: a database with Odoo's own modules only (base, web and what installs with them; scripts/test.sh makes
# one): the fresh database starts as its copy instead of installing them again. pv_kb must not be in it.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
template=${1:-}
work=$(mktemp -d)
db=pv_kb_release_$$
trap 'drop_db "$db"; rm -rf "$work"' EXIT
fail() { echo "e2e release: FAIL ($1)"; [[ -f $work/log ]] && tail -20 "$work/log"; exit 1; }
if [[ -n $template ]]; then
    known=$(psql_super -d "$template" -c "SELECT count(*) FROM ir_module_module WHERE name = 'pv_kb'") \
        || fail "no template database $template"
    ((known == 0)) || fail "the template $template knows pv_kb: the ZIP would not be installed alone"
    copy_db "$template" "$db" || fail "copy of $template"
fi

zip=$("$PY" "$REPO/scripts/release.py" --out "$work/dist" 2>/dev/null) || fail "release build"
mkdir -p "$work/addons"
"$PY" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$zip" "$work/addons"
[[ -f $work/addons/pv_kb/__manifest__.py ]] || fail "no pv_kb/__manifest__.py in the ZIP"
for lab in tests testing scripts docs; do [[ ! -e $work/addons/pv_kb/$lab ]] || fail "$lab/ is in the ZIP"; done
size=$(stat -c %s "$zip")
addons="$ODOO_PATH/addons,$work/addons"
run() { "$PY" "$ODOO_PATH/odoo-bin" "$@" >>"$work/log" 2>&1; }
run -c "$ODOO_CONF" --addons-path="$addons" -d "$db" -i pv_kb --stop-after-init --log-level=warn \
    || fail "install from the ZIP"
"$PY" "$ODOO_PATH/odoo-bin" --addons-path="$addons" pv_kb import "$work/addons/pv_kb/data/demo_kb/wissensbasis" \
    -d "$db" -c "$ODOO_CONF" --log-level=warn >>"$work/log" 2>&1 || fail "demo knowledge base import"
# ask LABEL QUESTION: one question without a model server; sets STATUS, CITED, FACTS from its log row
ask() {
    "$PY" "$ODOO_PATH/odoo-bin" --addons-path="$addons" pv_kb ask "$2" --ollama-url "http://127.0.0.1:$(free_port)" \
        -d "$db" -c "$ODOO_CONF" --log-level=warn >>"$work/log" 2>&1 || fail "ask ($1)"
    local row retrieved
    row=$(psql_super -d "$db" -F '|' -c "SELECT status, cited_ids, retrieved_ids, from_facts FROM pv_kb_query ORDER BY id DESC LIMIT 1")
    IFS='|' read -r STATUS CITED retrieved FACTS <<<"$row"
    [[ -n $CITED ]] || fail "$1: no citation"
    for id in ${CITED//,/ }; do
        [[ ",${retrieved// /}," == *",${id},"* ]] || fail "$1: cited $id was not retrieved ($retrieved)"
    done
}
# a question that needs explaining: the Notbetrieb quotes the passages
ask explanation "Was gilt für geringfügig Beschäftigte in der Kranken- und Pensionsversicherung?"
[[ $STATUS == notbetrieb && $FACTS == f ]] || fail "explanation: status '$STATUS' (facts $FACTS), expected notbetrieb"
notbetrieb=$CITED
# a value question: answered from the fact table, no model needed
ask value "Wie hoch ist die Geringfügigkeitsgrenze 2025?"
[[ $STATUS == beantwortet && $FACTS == t ]] || fail "value: status '$STATUS' (facts $FACTS), expected an answer from the facts"
[[ $CITED == *lb-gfb-01* ]] || fail "value: lb-gfb-01 not cited ($CITED)"
echo "e2e release: PASS (ZIP $(awk -v s="$size" 'BEGIN { printf "%.2f MB", s / 1e6 }'), installed alone; Notbetrieb answer citing $notbetrieb; value answered from the facts citing $CITED)"
