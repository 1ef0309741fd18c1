"""How a request reaches the Ollama server: session and headers, retries, timeouts and deadlines, cancellation.

:class:`OllamaTransport` is the base of the client (``OllamaClient`` in lib/llm/client.py, which adds the API
calls). It holds one ``requests`` session that sends the configured headers with every request (e.g. a
proxy's ``Authorization``), shows the server URL only redacted, and sends with :meth:`_send`:

Retries: connection errors and HTTP 5xx are retried ``config.retries`` times with exponential backoff
(``backoff``, ``2 * backoff``, ...). Read timeouts are not retried (a server that is busy for
``read_timeout`` seconds would only make the caller wait longer), and neither are 4xx answers (the
request is wrong, a repeat would fail the same way). A ``deadline`` (``time.monotonic()``) bounds every
attempt, connecting included, and the pauses between them.

:class:`CancelToken` ends a streamed request from another thread. Failures are raised as the errors of
lib/llm/errors.py. Pure Python (``requests`` only, no Odoo).
"""
from __future__ import annotations

import logging
import socket
import threading
import time

import requests

from .errors import (
    OllamaError,
    bad_shape,
    client_error,
    redact_url,
    request_failed,
    server_error,
    timed_out,
    unreachable,
)


class CancelToken:
    """Cancels a streamed request from another thread, within the time a socket shutdown takes.

    ``cancel()`` marks the token and shuts the socket of every response attached to it, so a read that
    is blocked waiting for the model's next token returns at once; the streaming loop then raises
    :class:`OllamaCancelled` and closes the response (Ollama stops generating when its client is gone).
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._responses: list = []

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        with self._lock:
            self._event.set()
            responses = list(self._responses)
        for resp in responses:
            _shutdown(resp)

    def attach(self, resp) -> None:
        with self._lock:
            self._responses.append(resp)
            cancelled = self._event.is_set()
        if cancelled:
            _shutdown(resp)

    def detach(self, resp) -> None:
        with self._lock:
            if resp in self._responses:
                self._responses.remove(resp)


def _shutdown(resp) -> None:
    """Shut the socket under a streamed response (a blocked read in another thread returns)."""
    conn = getattr(getattr(resp, "raw", None), "connection", None)
    sock = getattr(conn, "sock", None)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def is_read_timeout(exc: BaseException) -> bool:
    """Whether a requests error raised while reading a body was a timeout."""
    seen = 0
    cur: BaseException | None = exc
    while cur is not None and seen < 6:
        if type(cur).__name__ in ("ReadTimeoutError", "ReadTimeout", "TimeoutError"):
            return True
        if "timed out" in str(cur).lower():
            return True
        nested = [a for a in getattr(cur, "args", ()) if isinstance(a, BaseException)]
        cur = nested[0] if nested else cur.__context__
        seen += 1
    return False


class OllamaTransport:
    """Sends requests to one model server (``config``: an ``OllamaConfig`` of lib/llm/client.py).

    ``kind`` names the API for messages ("ollama", or "openai" in lib/llm/openai_client.py). An API key
    (``config.api_key``) goes out as ``Authorization: Bearer …`` and lives only in the session's headers:
    no message, detail or log line is built from the headers."""

    kind = "ollama"

    def __init__(self, config, session: requests.Session | None, logger: logging.Logger):
        self.config = config
        self.session = session or requests.Session()
        if config.headers:
            self.session.headers.update(config.headers)
        if getattr(config, "api_key", ""):
            self.session.headers["Authorization"] = f"Bearer {config.api_key}"
        self.logger = logger
        self._sleep = time.sleep

    @property
    def base_url(self) -> str:
        """Server URL without a trailing slash (may carry credentials: never shown, see ``shown_url``)."""
        return self.config.url.rstrip("/")

    @property
    def shown_url(self) -> str:
        """The server URL as messages and logs show it: without user name and password."""
        return redact_url(self.base_url)

    @property
    def label(self) -> str:
        """The API's name in log lines."""
        return "Ollama" if self.kind == "ollama" else "OpenAI-compatible server"

    def close(self) -> None:
        """Close the pooled HTTP connections."""
        self.session.close()

    def _json_call(self, method: str, path: str, payload: dict | None = None, *,
                   model: str | None = None, read_timeout: float | None = None,
                   deadline: float | None = None) -> dict:
        """Send a request and return the decoded JSON object."""
        resp = self._send(method, path, payload, model=model, read_timeout=read_timeout, deadline=deadline)
        try:
            data = resp.json()
        except ValueError as exc:
            raise bad_shape(self.shown_url, path, model, f"invalid JSON: {exc}; body {resp.text[:200]!r}",
                            None, self.kind) from exc
        if not isinstance(data, dict):
            raise bad_shape(self.shown_url, path, model, "JSON is not an object", data, self.kind)
        return data

    def _send(self, method: str, path: str, payload: dict | None = None, *,
              model: str | None = None, stream: bool = False,
              read_timeout: float | None = None, deadline: float | None = None
              ) -> requests.Response:
        """Send with retries on connection errors and 5xx; map errors."""
        url = self.base_url + path
        shown = self.shown_url
        kind = self.kind
        attempts = max(0, self.config.retries) + 1
        failure: OllamaError | None = None
        for attempt in range(attempts):
            if attempt:
                pause = self.config.backoff * (2 ** (attempt - 1))
                if deadline is not None and time.monotonic() + pause > deadline:
                    break
                self._sleep(pause)
            timeout = (self.config.connect_timeout, read_timeout or self.config.read_timeout)
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise timed_out(shown, path, model, 0, "deadline passed", kind)
                # each attempt ends by the deadline, connecting included
                timeout = (min(timeout[0], max(0.05, left)), min(timeout[1], max(0.05, left)))
            try:
                resp = self.session.request(method, url, json=payload, timeout=timeout,
                                            stream=stream)
            except requests.exceptions.ConnectTimeout as exc:
                failure = unreachable(shown, path, model, repr(exc), kind)
            except requests.exceptions.Timeout as exc:
                raise timed_out(shown, path, model, timeout[1], repr(exc), kind) from exc
            except requests.exceptions.ConnectionError as exc:
                if is_read_timeout(exc):
                    raise timed_out(shown, path, model, timeout[1], repr(exc), kind) from exc
                failure = unreachable(shown, path, model, repr(exc), kind)
            except requests.exceptions.RequestException as exc:
                raise request_failed(shown, path, model, repr(exc), kind) from exc
            else:
                if resp.status_code < 400:
                    return resp
                if resp.status_code < 500:
                    raise client_error(shown, resp, path, model, kind)
                failure = server_error(shown, resp, path, model, kind)
                resp.close()
            if attempt + 1 < attempts:
                # a retry is routine; the final failure is raised and logged by the caller, once
                self.logger.info("%s %s %s failed (attempt %d/%d), retrying: %s", self.label, method, shown + path,
                                 attempt + 1, attempts, failure.detail)
        assert failure is not None
        raise failure
