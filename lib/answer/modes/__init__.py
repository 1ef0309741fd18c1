"""Answer modes as plug-ins: one module per mode, registered here; every list of modes reads this registry.

A mode is an :class:`AnswerMode`: what the model is told (``system_prompt``) and how much of its window the
answer needs (``reserve_tokens``); how the context is shaped for it (``shape_context``, e.g. numbered
passages); the JSON schema sent as Ollama's ``format`` (``schema``, None for free text); and ``answer``,
which calls the model, checks its reply and renders the answer the user sees (an ``AgentAnswer``).

The modes, in the order every list shows them: ``text`` (free Markdown, checked afterwards), ``structured``
(JSON statements, each checked, the answer written in code), ``selection`` (the model names numbered
passages, the code quotes them); ``common`` holds what they share (the model call, the stopped and the
Notbetrieb answer). Which mode a chat model answers in is :func:`mode_for` (the settings
``answer_mode`` and ``answer_modes``).

Who reads the registry: the Selection fields (settings, question log, evaluation runs), the bake-off wizard,
the command line's help and check of ``--answer-modes``, the agent (prompt, reserve), ``respond`` (answer),
``stages`` (context) and the test stand-in (``schema_key``: which reply a request gets).

Adding a mode: a module here that calls :func:`register`, its tests, its German label in ``i18n/de.po``
and a paragraph in ``docs/answers.md``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ...text.i18n import _lt


@dataclass(frozen=True)
class AnswerMode:
    """One answer mode. ``label``: its name in lists (English source, German in i18n/de.po); ``title``:
    the longer name the settings show; ``schema_key``: the property that marks its JSON schema (the stand-in
    tells the modes' requests apart by it); ``bakeoff_default``: ticked when a bake-off starts."""

    key: str
    label: str
    title: str
    system_prompt: Callable[[], str]
    answer: Callable            # (prepared, client, on_delta, deadline, cancel, timings) -> AgentAnswer
    reserve_tokens: int = 700
    shape_context: Callable | None = None   # (prepared) -> None, after the messages are built
    schema: Callable | None = None          # (prepared) -> dict: Ollama's ``format``
    schema_key: str = ""
    bakeoff_default: bool = False


_REGISTRY: dict[str, AnswerMode] = {}
DEFAULT = "text"


def register(mode: AnswerMode) -> AnswerMode:
    if not re.fullmatch(r"[a-z][a-z0-9_]*", mode.key):
        raise ValueError(f"answer mode key {mode.key!r}: lower-case letters, digits and _ only")
    _REGISTRY[mode.key] = mode
    return mode


def unregister(key: str) -> None:
    """Take a mode out again (tests that register one of their own)."""
    if key == DEFAULT:
        raise ValueError("the free-text mode is the fallback of every other")
    _REGISTRY.pop(key, None)


def registered() -> list[AnswerMode]:
    return list(_REGISTRY.values())


def keys() -> list[str]:
    return list(_REGISTRY)


def get(key: str) -> AnswerMode:
    """The mode of ``key``; an unknown key (a mode taken out since) answers in free text."""
    return _REGISTRY.get(key) or _REGISTRY[DEFAULT]


def for_schema(fmt) -> AnswerMode | None:
    """The mode whose schema ``fmt`` (a request's ``format``) is, by its marking property."""
    properties = fmt.get("properties", {}) if isinstance(fmt, dict) else {}
    return next((m for m in _REGISTRY.values() if m.schema_key and m.schema_key in properties), None)


# --------------------------------------------------------------------------- which mode for which chat model


def parse_modes(text: str) -> dict[str, str]:
    """``model=mode`` items, one per line or separated by ``;`` or ``,`` (``#`` comments, blanks ignored)
    → {model: mode}; unknown modes are skipped."""
    out: dict[str, str] = {}
    for line in re.split(r"[\n;,]", text or ""):
        line = line.split("#", 1)[0].strip()
        name, sep, mode = line.partition("=")
        if sep and name.strip() and mode.strip().lower() in _REGISTRY:
            out[name.strip()] = mode.strip().lower()
    return out


def mode_for(model: str, text: str, default: str = DEFAULT) -> str:
    """The answer mode for ``model``: its line, else the line of its name without tag (``qwen3`` for
    ``qwen3:32b``), else ``default``."""
    modes = parse_modes(text)
    if model in modes:
        return modes[model]
    base = (model or "").partition(":")[0]
    return modes.get(base, default if default in _REGISTRY else DEFAULT)


# the modes that ship; each registers itself (the order is the order of every list)
from . import text, structured, selection  # noqa: E402,F401
