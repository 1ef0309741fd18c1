#!/usr/bin/env bash
# End to end: the eval command on a knowledge base and gold set nobody has seen (generated now, random seed).
# Used by scripts/test.sh on the test database; full-text mode, so no model is needed: with --answers and no
# Ollama server the answers are the Notbetrieb's, which must cite retrieved entries only. Prints
# "e2e eval: PASS" or "e2e eval: FAIL …".
#   scripts/e2e_eval.sh DB
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
db=${1:?database}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seed=${PV_KB_E2E_SEED:-$RANDOM}
"$PY" "$REPO/scripts/gen_synthetic_kb.py" "$work/kb" --entries 40 --seed "$seed" --prefix "gold$seed" >/dev/null
# a gold set in the eval format: each entry's title as the question, plus one question the base cannot answer
"$PY" - "$work/kb/wissensbasis/kb.json" "$work/gold.yaml" <<'PY'
import json, sys
import yaml
entries = json.load(open(sys.argv[1], encoding="utf-8"))["entries"]
gold = [{"id": f"q-{n:02d}", "question": e["title"] + "?", "kind": "fact", "expected_ids": [e["id"]]}
        for n, e in enumerate(entries[:15])]
gold.append({"id": "q-none", "question": "Wie wird das Wetter morgen in Graz?", "kind": "refuse", "expected_ids": []})
yaml.safe_dump(gold, open(sys.argv[2], "w", encoding="utf-8"), allow_unicode=True)
PY
# --part all: this gold set is generated now, nothing was tuned on it, so all of it is held out
# set -e would end the script at a failing command before it can report: exit codes are taken explicitly
if out=$(pv_kb_cmd eval --goldset "$work/gold.yaml" --kb "$work/kb/wissensbasis" --mode fts --part all --k 8 --answers \
         --ollama-url "http://127.0.0.1:$(free_port)" --json "$work/report.json" -d "$db" --log-level=warn 2>&1)
then rc=0; else rc=$?; fi
# the verdict: fts Recall@8 >= 0.8, and the Notbetrieb answers cite only retrieved entries and the expected ones
if verdict=$("$PY" - "$work/report.json" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
recall = r["modes"]["fts"]["retrieval"]["overall"]["recall@k"]
answers = r["answers"]["overall"]
print(f"fts Recall@8 {recall}, citation precision {answers['citation_precision']}, "
      f"citation recall {answers['citation_recall']:.2f}")
sys.exit(0 if recall >= 0.8 and answers["citation_precision"] == 1.0 and answers["citation_recall"] >= 0.8 else 1)
PY
); then ok=1; else ok=0; fi
psql_super -d "$db" -c "DELETE FROM pv_kb_batch; DELETE FROM pv_kb_entry;" >/dev/null || true
if [[ $rc -eq 0 && $ok -eq 1 ]]; then
    echo "e2e eval: PASS (seed $seed: 15 questions on an unseen base; $verdict)"
else
    echo "e2e eval: FAIL (seed $seed, exit $rc: ${verdict})"; echo "$out" | tail -20
    exit 1
fi
