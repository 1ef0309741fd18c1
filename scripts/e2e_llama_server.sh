#!/usr/bin/env bash
# End to end against a real third-party OpenAI-compatible server: llama-cpp-python's own server
# (python -m llama_cpp.server, scripts/openai_server.sh) with Qwen2.5-Coder-1.5B on the CPU as the chat server,
# multilingual-e5-small embeddings from the stand-in's /v1/embeddings. Imports the demo knowledge base, embeds it
# and asks a demo question through the addon's OpenAI-compatible client; the answer must be "beantwortet" with
# citations that were all retrieved, and the question log must name the llama server.
# Needs the llama-cpp-python build and the GGUF of scripts/local_model.sh: without them it is skipped loudly
# (exit code 3). Prints "e2e llama server: PASS …", "… FAIL …" or "… SKIPPED …".
#   scripts/e2e_llama_server.sh DB
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
db=${1:?database}
if ! llama_built || [[ ! -s $LLM_CHAT_GGUF ]]; then
    printf '\n\033[1;43m!!! NO llama-cpp-python BUILD IN %s (or no %s): THE TEST AGAINST llama_cpp.server WAS SKIPPED (scripts/local_model.sh builds both) !!!\033[0m\n\n' \
        "$LLM_VENV" "$LLM_CHAT_GGUF" >&2
    echo "e2e llama server: SKIPPED (no llama-cpp-python build or chat GGUF)"
    exit 3
fi
ensure_llama_server_deps
work=$(mktemp -d)
llama_pid="" standin_pid=""
stop() {   # SIGTERM, and SIGKILL after 10 s (uvicorn waits for a request the model is still computing)
    kill "$1" 2>/dev/null || return 0
    for _ in $(seq 20); do kill -0 "$1" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}
cleanup() {
    [[ -n $llama_pid ]] && stop "$llama_pid"
    [[ -n $standin_pid ]] && stop "$standin_pid"
    psql_super -d "$db" -c "DELETE FROM pv_kb_batch; DELETE FROM pv_kb_entry;
                            DELETE FROM ir_config_parameter WHERE key IN ('pv_kb.server_type', 'pv_kb.ollama_url',
                              'pv_kb.chat_servers', 'pv_kb.embedding_model', 'pv_kb.query_prefix', 'pv_kb.passage_prefix',
                              'pv_kb.chat_model', 'pv_kb.answer_modes', 'pv_kb.num_ctx', 'pv_kb.read_timeout',
                              'pv_kb.fact_answers');" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "e2e llama server: FAIL ($1)"; tail -n 20 "$work/ask.log" "$work/llama.log" 2>/dev/null; exit 1; }

lport=$(free_port) sport=$(free_port)
"$LLM_VENV/bin/python" -m llama_cpp.server --model "$LLM_CHAT_GGUF" --model_alias qwen2.5-coder:1.5b \
    --host 127.0.0.1 --port "$lport" --n_ctx 4096 --n_threads 2 --n_threads_batch 2 --verbose false \
    >"$work/llama.log" 2>&1 &
llama_pid=$!
"$PY" "$REPO/scripts/ollama_standin.py" --port "$sport" --embed-model multilingual-e5-small=e5 --overhead-ms 0 \
    >"$work/standin.log" 2>&1 &
standin_pid=$!
up=0
for _ in $(seq 240); do
    if curl -fsS "http://127.0.0.1:$lport/v1/models" >/dev/null 2>&1 \
            && curl -fsS "http://127.0.0.1:$sport/v1/models" >/dev/null 2>&1; then up=1; break; fi
    sleep 0.5
done
((up)) || fail "servers did not start"

pv_kb_cmd import "$REPO/data/demo_kb/wissensbasis" -d "$db" --log-level=warn >/dev/null 2>"$work/ask.log" \
    || fail "import"
set_param() {
    psql_super -d "$db" -c "INSERT INTO ir_config_parameter (key, value, create_date, write_date)
                            VALUES ('pv_kb.$1', '$2', now(), now())
                            ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value" >/dev/null
}
# embeddings from the stand-in (its /v1/embeddings), answers from llama_cpp.server, both as OpenAI-compatible servers
set_param server_type openai
set_param ollama_url "http://127.0.0.1:$sport"
set_param chat_servers "openai http://127.0.0.1:$lport"
set_param embedding_model multilingual-e5-small
set_param query_prefix "query: "
set_param passage_prefix "passage: "
set_param chat_model qwen2.5-coder:1.5b
set_param answer_modes "qwen2.5-coder=selection"
set_param fact_answers False   # the model answers (a value question would else be answered from the fact table)
# the context the server was started with, and time for two cores that other work shares
set_param num_ctx 4096
set_param read_timeout 600
pv_kb_cmd embed -d "$db" --log-level=warn >/dev/null 2>>"$work/ask.log" || fail "embed"
question="Wie hoch ist die Geringfügigkeitsgrenze 2025?"
started=$(date +%s.%N)
pv_kb_cmd ask "$question" --answer-time-limit 600 -d "$db" --log-level=warn >"$work/ask.log" 2>&1 \
    || fail "ask"
seconds=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
row=$(psql_super -d "$db" -F '|' -c "SELECT status, cited_ids, retrieved_ids, server, answer_tokens
                                      FROM pv_kb_query ORDER BY id DESC LIMIT 1")
IFS='|' read -r status cited retrieved server tokens <<<"$row"
[[ $status == beantwortet ]] || fail "status '$status', expected beantwortet"
[[ -n $cited ]] || fail "no citation"
for id in ${cited//,/ }; do
    [[ ",${retrieved// /}," == *",${id},"* ]] || fail "cited $id was not retrieved ($retrieved)"
done
[[ $server == "http://127.0.0.1:$lport" ]] || fail "the log names '$server', not the llama server"
grep -q "551,10" "$work/ask.log" || fail "the answer lacks the value € 551,10"
echo "e2e llama server: PASS (llama_cpp.server, qwen2.5-coder:1.5b, selection mode: beantwortet citing $cited," \
     "$tokens answer tokens, ${seconds} s for the ask command)"
