"""Several model servers behind one client: a list per role (embedding, chat, rerank), failover, load spreading
for chat, a cool-down for a server that failed, and the check that all embedding servers serve the same model.

The answer pipeline, the embedding job and the connection test hold one client and call ``embed``, ``chat``,
``chat_stream``, ``embedding_facts``, ``has_model``, ``describe`` (the interface of lib/llm/client.py's
``OllamaClient`` and lib/llm/openai_client.py's ``OpenAIClient``); :class:`ServerPool` has that interface too
and hands each call to the servers of its role:

- **Failover**: a connection error, a timeout or an HTTP 5xx (after the server's own retries) moves the call
  to the next server of the role. Never moved: a cancelled request, a request the personal-data gate refused,
  a 4xx (the request is wrong, another server would refuse it too), a reply of the wrong shape. A streamed
  answer is moved only before its first piece arrived; after that a failure ends it as with one server.
- **Time**: with a ``deadline``, a server gets at most the time left divided by the servers still to try, for
  its first piece (streamed) or its whole answer; so a server that hangs leaves the next one time to answer
  within the answer time limit. When every server failed, the last failure is raised, exactly as with one
  server (the answer pipeline then answers in Notbetrieb).
- **Load spreading** (chat only): each call starts at the next server in turn (round robin per list and
  process); servers in cool-down go to the end of the order.
- **Cool-down**: a server that failed is tried last for ``cooldown`` seconds (30 by default); its state
  (:func:`health`) is kept per process: last failure, whether it is cooling down, answers and failures since.
- **Embedding consistency**: vectors of different models cannot be mixed in one index, so
  :meth:`ServerPool.check_embedding_servers` embeds one probe text on every embedding server and requires the
  same dimension and (nearly) the same vector; ``embedding_facts`` (the embedding job and the connection test
  call it) refuses an inconsistent list with :class:`InconsistentServers`.

Server lists are written one server a line, ``[kind] URL`` with kind ``ollama``, ``openai`` or (rerank only)
``tei``; :func:`parse_servers`. Pure Python (``requests`` only, no Odoo).
"""
from __future__ import annotations

import dataclasses
import logging
import math
import re
import threading
import time
from dataclasses import dataclass
from typing import Iterator

from .client import KB_TEXT, ChatChunk, OllamaClient, OllamaConfig
from .errors import OllamaBadResponse, OllamaCancelled, OllamaError, OllamaTimeout, OllamaUnreachable, redact_url
from .openai_client import OpenAIClient
from .transport import CancelToken

_LOGGER = logging.getLogger(__name__)

KINDS = ("ollama", "openai")
RERANK_KINDS = ("openai", "tei")
DEFAULT_COOLDOWN = 30.0
PROBE_TEXT = "passage: Die Sonderzahlung wird mit dem festen Satz versteuert."
#: cosine two servers' vectors of the probe text must reach to count as the same model
SAME_MODEL_COSINE = 0.99


class InconsistentServers(OllamaBadResponse):
    """The embedding servers of one list do not serve the same model (dimension or vectors differ)."""


@dataclass(frozen=True)
class Server:
    """One entry of a server list."""

    kind: str
    url: str

    @property
    def shown(self) -> str:
        return redact_url(self.url.rstrip("/"))


def parse_servers(text: str | None, default_kind: str = "ollama", kinds: tuple = KINDS) -> list[Server]:
    """``"openai http://a:8000\\nhttp://b:11434"`` -> Servers; a line without kind gets ``default_kind``.

    Empty lines and lines starting with ``#`` are skipped; ValueError names a line that is not ``[kind] URL``
    (without its password)."""
    servers = []
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        kind, url = (default_kind, parts[0]) if len(parts) == 1 else (parts[0].lower(), parts[1])
        if len(parts) > 2 or kind not in kinds or not url.lower().startswith(("http://", "https://")):
            shown = re.sub(r"//[^/@\s]*@", "//", line)   # never a password in a message
            raise ValueError(f"not '[{'|'.join(kinds)}] http(s)://host:port': {shown!r}")
        servers.append(Server(kind, url.rstrip("/")))
    return servers


def make_one(server: Server, config: OllamaConfig, logger: logging.Logger | None = None):
    """The client of one server (its own copy of ``config`` with the server's URL)."""
    own = dataclasses.replace(config, url=server.url, headers=dict(config.headers))
    if server.kind == "ollama":
        return OllamaClient(own, logger=logger)
    return OpenAIClient(own, logger=logger, rerank_api="tei" if server.kind == "tei" else "v1")


# --------------------------------------------------------------------------- health, per process

_HEALTH: dict[str, dict] = {}
_HEALTH_LOCK = threading.Lock()
_TURN: dict[tuple, int] = {}


def _state(url: str) -> dict:
    return _HEALTH.setdefault(url, {"failed_at": None, "until": 0.0, "error": "", "answers": 0, "failures": 0})


def mark_failed(url: str, error: OllamaError, cooldown: float) -> None:
    with _HEALTH_LOCK:
        state = _state(url)
        state.update(failed_at=time.time(), until=time.monotonic() + cooldown, error=error.message,
                     failures=state["failures"] + 1)


def mark_ok(url: str) -> None:
    with _HEALTH_LOCK:
        state = _state(url)
        state["until"] = 0.0
        state["answers"] += 1


def cooling(url: str) -> bool:
    with _HEALTH_LOCK:
        state = _HEALTH.get(url)
        return bool(state and state["until"] > time.monotonic())


def health(servers: list[Server]) -> list[dict]:
    """State of each server: shown URL, kind, ``ok`` (not in cool-down), last error, answers, failures."""
    out = []
    with _HEALTH_LOCK:
        for server in servers:
            state = dict(_HEALTH.get(server.url) or {"failed_at": None, "until": 0.0, "error": "", "answers": 0,
                                                     "failures": 0})
            out.append({"url": server.shown, "kind": server.kind, "ok": state["until"] <= time.monotonic(),
                        "error": state["error"], "failed_at": state["failed_at"], "answers": state["answers"],
                        "failures": state["failures"]})
    return out


def reset_health() -> None:
    """Forget every server's state and turn (tests)."""
    with _HEALTH_LOCK:
        _HEALTH.clear()
        _TURN.clear()


def fails_over(exc: BaseException) -> bool:
    """Whether a failure moves the call to the next server (module docstring)."""
    if isinstance(exc, (OllamaUnreachable, OllamaTimeout)):
        return True
    return isinstance(exc, OllamaBadResponse) and not isinstance(exc, InconsistentServers) \
        and (exc.status or 0) >= 500


class _AttemptToken(CancelToken):
    """The pool's own token for one attempt, linked to the caller's: the caller's ``cancel()`` ends the attempt
    as before, the pool's timer ends it when the server keeps the first piece back too long."""

    def __init__(self, parent: CancelToken | None):
        super().__init__()
        self.parent = parent
        self.expired = False

    @property
    def cancelled(self) -> bool:
        return self._event.is_set() or bool(self.parent is not None and self.parent.cancelled)

    def attach(self, resp) -> None:
        super().attach(resp)
        if self.parent is not None:
            self.parent.attach(resp)

    def detach(self, resp) -> None:
        super().detach(resp)
        if self.parent is not None:
            self.parent.detach(resp)

    def expire(self) -> None:
        self.expired = True
        self.cancel()


class _SharedConfig:
    """``pool.config``: reading gives the first server's value, setting sets it on every server (the embedding
    job turns retries off for a single-section retry this way)."""

    def __init__(self, clients):
        object.__setattr__(self, "_clients", clients)

    def __getattr__(self, name):
        return getattr(self._clients[0].config, name)

    def __setattr__(self, name, value):
        for client in self._clients:
            setattr(client.config, name, value)


class ServerPool:
    """The servers of each role behind the one-client interface (module docstring)."""

    def __init__(self, embedding: list[Server], chat: list[Server], config: OllamaConfig, *,
                 rerank: list[Server] | None = None, cooldown: float = DEFAULT_COOLDOWN,
                 logger: logging.Logger | None = None):
        if not embedding or not chat:
            raise ValueError("a pool needs at least one embedding and one chat server")
        self.logger = logger or _LOGGER
        self.cooldown = cooldown
        self.servers = {"embedding": list(embedding), "chat": list(chat), "rerank": list(rerank or [])}
        self._clients: dict[Server, object] = {}
        for server in self.servers["embedding"] + self.servers["chat"] + self.servers["rerank"]:
            if server not in self._clients:
                self._clients[server] = make_one(server, config, logger)
        self.config = _SharedConfig(list(self._clients.values()))

    # -- the one-client interface --------------------------------------------------------------

    @property
    def shown_url(self) -> str:
        return ", ".join(s.shown for s in self.servers["chat"])

    def client(self, server: Server):
        return self._clients[server]

    def close(self) -> None:
        for client in self._clients.values():
            client.close()

    def describe(self) -> str:
        return self.client(self.servers["chat"][0]).describe()

    def version(self) -> str:
        return self.client(self.servers["chat"][0]).version()

    def tags(self) -> list[str]:
        return self.client(self.servers["chat"][0]).tags()

    def has_model(self, model: str) -> bool:
        """Whether the first reachable chat or embedding server has ``model`` (the eval command asks for both
        its models without saying which is which)."""
        return any(self._call(role, lambda c, d: c.has_model(model), None, spread=False)
                   for role in ("chat", "embedding"))

    def embedding_facts(self, model: str) -> tuple[int, int | None]:
        """(dimension, context) of ``model``; with several embedding servers all of them must agree."""
        if len(self.servers["embedding"]) == 1:
            return self.client(self.servers["embedding"][0]).embedding_facts(model)
        facts = self.check_embedding_servers(model)
        return facts[0]["dim"], min((f["context"] for f in facts if f["context"]), default=None)

    def embedding_dim(self, model: str) -> int:
        return self.embedding_facts(model)[0]

    def embed(self, model, texts, batch_size=None, context_tokens=None, deadline=None, *, origin):
        return self._call("embedding", lambda c, d: c.embed(model, texts, batch_size, context_tokens, d,
                                                            origin=origin), deadline, spread=False)

    def chat(self, model, messages, *, origin, options=None, num_ctx=None, expected_prompt_tokens=None,
             response_format=None, deadline=None):
        return self._call("chat", lambda c, d: c.chat(
            model, messages, origin=origin, options=options, num_ctx=num_ctx,
            expected_prompt_tokens=expected_prompt_tokens, response_format=response_format, deadline=d),
            deadline, spread=True)

    def rerank(self, model, query, documents, *, origin, deadline=None):
        if not self.servers["rerank"]:
            raise ValueError("no rerank server configured")
        return self._call("rerank", lambda c, d: c.rerank(model, query, documents, origin=origin, deadline=d),
                          deadline, spread=False)

    def chat_stream(self, model, messages, *, origin, options=None, num_ctx=None, expected_prompt_tokens=None,
                    deadline=None, response_format=None, cancel: CancelToken | None = None) -> Iterator[ChatChunk]:
        """As the clients' ``chat_stream``; moves to the next chat server until the first piece arrived."""
        order = self._order("chat", spread=True)
        failure: OllamaError | None = None
        for n, server in enumerate(order):
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0.05 and failure is not None:
                break
            token = _AttemptToken(cancel)
            budget = None if left is None or n + 1 == len(order) else left / (len(order) - n)
            timer = threading.Timer(budget, token.expire) if budget is not None else None
            client = self.client(server)
            configured = client.config.read_timeout
            if budget is not None:
                # the wait for the reply's headers cannot be cancelled by the timer: bounded by the read timeout
                client.config.read_timeout = max(0.05, min(configured, budget))
            stream = client.chat_stream(
                model, messages, origin=origin, options=options, num_ctx=num_ctx,
                expected_prompt_tokens=expected_prompt_tokens, deadline=deadline, response_format=response_format,
                cancel=token)
            try:
                if timer is not None:
                    timer.daemon = True
                    timer.start()
                try:
                    first = next(stream)
                finally:
                    client.config.read_timeout = configured
                    if timer is not None:
                        timer.cancel()
            except StopIteration:
                first = None
            except OllamaCancelled:
                if not token.expired or (cancel is not None and cancel.cancelled):
                    raise
                failure = OllamaTimeout(_late_message(server, model, budget), f"no first piece within {budget:.1f} s",
                                        url=server.shown, model=model)
                self._failed(server, "chat", failure)
                stream.close()
                continue
            except OllamaError as exc:
                if not fails_over(exc):
                    raise
                failure = exc
                self._failed(server, "chat", exc)
                continue
            # from here on the server streams: later failures end the answer as with one server
            mark_ok(server.url)
            if first is not None:
                yield first
            yield from stream
            return
        assert failure is not None
        raise failure

    # -- the consistency check of the embedding servers ------------------------------------------

    def check_embedding_servers(self, model: str) -> list[dict]:
        """Per embedding server: shown URL, dimension, context; raises InconsistentServers unless all agree."""
        facts, first_vec = [], None
        for server in self.servers["embedding"]:
            client = self.client(server)
            dim, context = client.embedding_facts(model)
            vec = client.embed(model, [PROBE_TEXT], batch_size=1, origin=KB_TEXT).vectors[0]
            facts.append({"url": server.shown, "dim": dim, "context": context})
            if first_vec is None:
                first_vec = vec
                continue
            if dim != facts[0]["dim"] or len(vec) != len(first_vec):
                raise InconsistentServers(
                    f"Die Embedding-Server liefern verschiedene Dimensionen ({facts[0]['url']}: {facts[0]['dim']}, "
                    f"{server.shown}: {dim}). Alle Embedding-Server einer Liste müssen dasselbe Modell anbieten.",
                    f"dimension {dim} != {facts[0]['dim']}", url=server.shown, model=model)
            similarity = _cosine(vec, first_vec)
            if similarity < SAME_MODEL_COSINE:
                raise InconsistentServers(
                    f"Die Embedding-Server {facts[0]['url']} und {server.shown} liefern für denselben Text "
                    f"verschiedene Vektoren (Kosinus {similarity:.3f}): nicht dasselbe Modell {model}. Alle "
                    "Embedding-Server einer Liste müssen dasselbe Modell anbieten.",
                    f"probe cosine {similarity:.4f}", url=server.shown, model=model)
        return facts

    def health(self) -> dict:
        """{role: [state of each server]} (see :func:`health`)."""
        return {role: health(servers) for role, servers in self.servers.items() if servers}

    # -- plumbing ------------------------------------------------------------------------------

    def _order(self, role: str, spread: bool) -> list[Server]:
        servers = self.servers[role]
        if spread and len(servers) > 1:
            key = (role, tuple(servers))
            with _HEALTH_LOCK:
                turn = _TURN.get(key, 0)
                _TURN[key] = turn + 1
            start = turn % len(servers)
            servers = servers[start:] + servers[:start]
        # servers in cool-down last (still tried when all others failed)
        return sorted(servers, key=lambda s: cooling(s.url))

    def _call(self, role: str, call, deadline: float | None, spread: bool):
        order = self._order(role, spread)
        failure: OllamaError | None = None
        for n, server in enumerate(order):
            attempt_deadline = deadline
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0.05 and failure is not None:
                    break
                if n + 1 < len(order):
                    attempt_deadline = time.monotonic() + left / (len(order) - n)
            try:
                result = call(self.client(server), attempt_deadline)
            except OllamaError as exc:
                if not fails_over(exc):
                    raise
                failure = exc
                self._failed(server, role, exc)
                continue
            mark_ok(server.url)
            return result
        assert failure is not None
        raise failure

    def _failed(self, server: Server, role: str, exc: OllamaError) -> None:
        was_cooling = cooling(server.url)
        mark_failed(server.url, exc, self.cooldown)
        others = len(self.servers[role]) > 1
        level = logging.WARNING if others and not was_cooling else logging.INFO
        self.logger.log(level, "%s server %s failed (%s); %s for %.0f s", role.capitalize(), server.shown,
                        exc.detail or exc.message, "next server tried, this one tried last" if others else "noted",
                        self.cooldown)


def _late_message(server: Server, model: str, budget: float) -> str:
    seconds = f"{budget:.1f}".replace(".", ",")
    return (f"Der Modellserver unter {server.shown} hat mit Modell {model} nicht innerhalb von {seconds} s zu "
            "antworten begonnen.")


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def single_or_pool(embedding: list[Server], chat: list[Server], config: OllamaConfig, *,
                   rerank: list[Server] | None = None, cooldown: float = DEFAULT_COOLDOWN,
                   logger: logging.Logger | None = None):
    """One plain client when one server serves both roles and there is no rerank server (as before), else a
    :class:`ServerPool`."""
    if len(embedding) == 1 and embedding == chat and not rerank:
        return make_one(embedding[0], config, logger)
    return ServerPool(embedding, chat, config, rerank=rerank, cooldown=cooldown, logger=logger)
