#!/usr/bin/env bash
# A real third-party OpenAI-compatible server with the project's CPU chat model: llama-cpp-python's own server
# (python -m llama_cpp.server) serving Qwen2.5-Coder-1.5B-Instruct Q4_K_M as "qwen2.5-coder:1.5b" on
# 127.0.0.1:PORT (/v1/models, /v1/chat/completions with streaming and response_format). It has no embedding
# model of the project's (serve e5 from scripts/local_model.sh or the stand-in) and no /v1/rerank.
#
#   scripts/openai_server.sh [--port 11600] [--threads 2] [--n-ctx 8192]
#
# Needs the llama-cpp-python build and the GGUF of scripts/local_model.sh (run that once); installs the server's
# pure-Python packages into the same venv. Point the addon at it (Einstellungen): Servertyp "OpenAI-kompatibel",
# URL http://127.0.0.1:PORT (as chat server, docs/model-servers.md), chat model qwen2.5-coder:1.5b, answer mode
# per chat model "qwen2.5-coder=selection", structured output "json_object" (or automatic).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
port=11600 threads=2 n_ctx=8192
while (($#)); do
    case $1 in
        --port) port=$2; shift ;;
        --threads) threads=$2; shift ;;
        --n-ctx) n_ctx=$2; shift ;;
        *) die "Unknown option $1" ;;
    esac
    shift
done
llama_built || die "llama-cpp-python is missing in $LLM_VENV: run scripts/local_model.sh first"
[[ -s $LLM_CHAT_GGUF ]] || die "Model file $LLM_CHAT_GGUF is missing: run scripts/local_model.sh first"
ensure_llama_server_deps
say "OpenAI-compatible server (llama_cpp.server) at http://127.0.0.1:$port, model qwen2.5-coder:1.5b. Ctrl+C stops it."
exec "$LLM_VENV/bin/python" -m llama_cpp.server --model "$LLM_CHAT_GGUF" --model_alias qwen2.5-coder:1.5b \
    --host 127.0.0.1 --port "$port" --n_ctx "$n_ctx" --n_threads "$threads" --n_threads_batch "$threads" --verbose false
