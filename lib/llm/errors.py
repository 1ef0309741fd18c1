"""The errors of the model clients (lib/llm/client.py, lib/llm/openai_client.py) and how they are worded.

Every failure is raised as a subclass of :class:`OllamaError` (the name is historical: the OpenAI-compatible
client raises the same classes) whose ``message`` is a German sentence for the user and whose ``detail`` keeps
the technical cause for the log. The functions below word each kind of failure for the server at ``url``,
which is always the redacted one (:func:`redact_url`): user name and password of the server URL never reach a
message or a log line, an API key is only ever a request header (never part of a message or detail), and a
body that is not the server's own error JSON is never echoed into a message. ``kind`` ("ollama" or
"openai") names the server in the message. Pure Python, no Odoo.
"""
from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests


class OllamaError(Exception):
    """Base error: ``message`` is German for the user, ``detail`` technical."""

    def __init__(self, message: str, detail: str = "", *, url: str | None = None,
                 model: str | None = None, status: int | None = None):
        super().__init__(message)
        self.message = message
        self.detail = detail
        self.url = url
        self.model = model
        self.status = status

    def __str__(self) -> str:
        return self.message


class OllamaUnreachable(OllamaError):
    """The server could not be reached (refused, DNS, connection dropped)."""


class OllamaTimeout(OllamaError):
    """The server did not answer within the read timeout or the deadline."""


class OllamaModelMissing(OllamaError):
    """The requested model is not installed on the server (HTTP 404)."""


class OllamaBadResponse(OllamaError):
    """Malformed JSON, unexpected shape, a 4xx answer or 5xx after retries."""


class OllamaCancelled(OllamaError):
    """The caller cancelled the request (the user pressed Stop or left)."""


def redact_url(url: str | None) -> str:
    """``https://user:secret@host/x`` -> ``https://host/x``: credentials never reach messages or logs."""
    if not url:
        return url or ""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


# --------------------------------------------------------------------------- the wording of each failure

# how a message names the server: (subject, after "an"/accusative, after "von"/dative, "läuft" clause)
_NAMES = {
    "ollama": ("Ollama", "Ollama", "Ollama", "ob Ollama läuft"),
    "openai": ("Der Modellserver", "den Modellserver", "dem Modellserver", "ob der Modellserver läuft"),
}


def _name(kind: str, case: int = 0) -> str:
    return _NAMES.get(kind, _NAMES["ollama"])[case]



def unreachable(url: str, path: str, model: str | None, detail: str, kind: str = "ollama") -> OllamaUnreachable:
    return OllamaUnreachable(
        f"{_name(kind)} unter {url} nicht erreichbar ({path}{_model_suffix(model)}). "
        f"Bitte prüfen, {_name(kind, 3)} und die URL in den Einstellungen stimmt.",
        detail, url=url, model=model)


def timed_out(url: str, path: str, model: str | None, seconds: float, detail: str,
              kind: str = "ollama") -> OllamaTimeout:
    return OllamaTimeout(
        f"{_name(kind)} unter {url} hat nicht innerhalb von {_de_number(seconds)} s geantwortet "
        f"({path}{_model_suffix(model)}). Bitte später erneut versuchen oder das "
        "Zeitlimit in den Einstellungen erhöhen.",
        detail, url=url, model=model)


def cancelled(url: str, model: str | None) -> OllamaCancelled:
    return OllamaCancelled("Die Antwort wurde abgebrochen.", "cancelled by the caller", url=url, model=model)


def request_failed(url: str, path: str, model: str | None, detail: str, kind: str = "ollama") -> OllamaBadResponse:
    """The request could not be sent for another reason than the connection or a timeout."""
    return OllamaBadResponse(
        f"Die Anfrage an {_name(kind, 1)} unter {url} ist fehlgeschlagen "
        f"({path}{_model_suffix(model)}).", detail, url=url, model=model)


def client_error(url: str, resp: requests.Response, path: str, model: str | None,
                 kind: str = "ollama") -> OllamaError:
    """An HTTP 4xx answer: the model is missing, the endpoint unknown, or the request refused."""
    error, raw = _error_text(resp)
    detail = f"HTTP {resp.status_code} from {redact_url(resp.url)}: {raw}"
    low = error.lower()
    if resp.status_code == 404 and model and "model" in low and ("not found" in low or "does not exist" in low):
        if kind == "openai":
            return OllamaModelMissing(
                f"Modell {model} wird vom Modellserver unter {url} nicht angeboten. Bitte den Modellnamen "
                "prüfen (Liste: /v1/models).", detail, url=url, model=model, status=404)
        return OllamaModelMissing(
            f"Modell {model} ist auf dem Ollama-Server nicht installiert "
            f"(ollama pull {model}). Server: {url}.",
            detail, url=url, model=model, status=404)
    if resp.status_code == 404 and kind == "openai":
        return OllamaBadResponse(
            f"Der Modellserver unter {url} kennt den Endpunkt {path} nicht. Bitte Servertyp und URL prüfen "
            "(URL ohne /v1) und ob der Server diese Funktion anbietet.",
            detail, url=url, model=model, status=404)
    if resp.status_code == 404:
        return OllamaBadResponse(
            f"Ollama unter {url} kennt den Endpunkt {path} nicht. Bitte Ollama "
            "auf eine aktuelle Version aktualisieren.",
            detail, url=url, model=model, status=404)
    if resp.status_code in (401, 403):
        return OllamaBadResponse(
            f"{_name(kind)} unter {url} verweigert den Zugriff (HTTP {resp.status_code}). Bitte den "
            "API-Schlüssel bzw. Proxy-Header in den Einstellungen prüfen.",
            detail, url=url, model=model, status=resp.status_code)
    return OllamaBadResponse(
        f"{_name(kind)} unter {url} hat die Anfrage {path}{_model_suffix(model)} "
        f"abgelehnt (HTTP {resp.status_code}{': ' + error if error else ''}). Bitte Modell und Einstellungen "
        "prüfen.", detail, url=url, model=model, status=resp.status_code)


def server_error(url: str, resp: requests.Response, path: str, model: str | None,
                 kind: str = "ollama") -> OllamaBadResponse:
    """An HTTP 5xx answer (after the retries)."""
    error, raw = _error_text(resp)
    log = "das Ollama-Protokoll" if kind == "ollama" else "das Protokoll des Modellservers"
    return OllamaBadResponse(
        f"{_name(kind)} unter {url} meldet einen Serverfehler (HTTP {resp.status_code}) "
        f"bei {path}{_model_suffix(model)}{': ' + error if error else ''}. Bitte {log} "
        "prüfen und später erneut versuchen.",
        f"HTTP {resp.status_code} from {redact_url(resp.url)}: {raw}",
        url=url, model=model, status=resp.status_code)


def error_in_body(url: str, path: str, model: str | None, error: Any, kind: str = "ollama") -> OllamaBadResponse:
    """An ``error`` field in an answer that came with HTTP 200 (e.g. in the middle of a stream)."""
    if isinstance(error, dict):   # OpenAI's shape: {"message": …, "type": …}
        error = str(error.get("message") or error.get("type") or "")[:200]
    return OllamaBadResponse(
        f"{_name(kind)} unter {url} meldet einen Fehler bei {path}"
        f"{_model_suffix(model)}: {error}. Bitte erneut versuchen.",
        f"error in response body: {error!r}", url=url, model=model)


def bad_shape(url: str, path: str, model: str | None, why: str, data: Any, kind: str = "ollama") -> OllamaBadResponse:
    """An answer that is not what the endpoint returns (``why`` and the start of ``data`` go to the detail)."""
    snippet = json.dumps(data, ensure_ascii=False)[:200] if data is not None else ""
    check = "Ollama-Version und Modell" if kind == "ollama" else "Servertyp, Server-Version und Modell"
    return OllamaBadResponse(
        f"{_name(kind)} unter {url} hat auf {path}{_model_suffix(model)} eine "
        f"unerwartete Antwort geliefert. Bitte {check} prüfen.",
        f"{why} {snippet}".strip(), url=url, model=model)


def connection_dropped(url: str, model: str, detail: str, kind: str = "ollama") -> OllamaBadResponse:
    """The connection broke while a streamed answer was read."""
    return OllamaBadResponse(
        f"Die Verbindung zu {_name(kind, 2)} unter {url} ist während der "
        f"Antwort von Modell {model} abgebrochen. Bitte erneut versuchen.",
        detail, url=url, model=model)


def stream_incomplete(url: str, model: str, kind: str = "ollama") -> OllamaBadResponse:
    """A streamed answer that ended without its closing ``done`` line (``[DONE]`` / a finish reason)."""
    server = "Ollama" if kind == "ollama" else "Modellserver"
    return OllamaBadResponse(
        f"Die Antwort von Modell {model} ({server} unter {url}) endete "
        "unvollständig. Bitte erneut versuchen.",
        "stream ended without its closing line", url=url, model=model)


def _de_number(value: float) -> str:
    """``0.3`` -> ``0,3`` for German messages."""
    return f"{value:g}".replace(".", ",")


def _model_suffix(model: str | None) -> str:
    return f", Modell {model}" if model else ""


def _error_text(resp: requests.Response) -> tuple[str, str]:
    """(shown, raw): Ollama's own ``error`` field for messages (short), and the start of the body for the
    technical detail. A body that is not Ollama's error JSON is never echoed into a message: whatever
    answered at the configured address (a proxy, another service) stays out of what users see."""
    raw = resp.text[:200].strip() or resp.reason or ""
    try:
        data = resp.json()
    except ValueError:
        return "", raw
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return data["error"][:200], raw
    # OpenAI-compatible servers: {"error": {"message": …, "type": …, "code": …}}
    if isinstance(data, dict) and isinstance(data.get("error"), dict) \
            and isinstance(data["error"].get("message"), str):
        return data["error"]["message"][:200], raw
    return "", raw
