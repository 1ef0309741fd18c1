"""Untrusted text: YAML without anchors or aliases, bounded quotes of values in messages, characters refused.

Uploaded files and request bodies come from people we do not trust to be careful (or honest). Three rules
live here so that every reader applies them the same way:

* :func:`load_yaml` reads YAML with the safe loader (C-accelerated when available) and refuses anchors and
  aliases before anything is built: a few hundred bytes of nested aliases expand to gigabytes once a value
  is turned into text. The refusal is a :class:`YamlRefused` with a German sentence.
* :func:`quote` shows a value in a message with a hard length cap (``reprlib`` never walks a whole
  structure), and :func:`cap` bounds any message, so no message or error response grows with the input.
* :func:`bad_character` names the first character a question or a comment must not contain: NUL and other
  control characters (tab and newlines are fine), lone surrogates and Unicode non-characters.
"""
from __future__ import annotations

import reprlib
from typing import Any

import yaml

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MESSAGE_LIMIT = 2000      # characters of one message shown to a user
QUOTE_LIMIT = 80          # characters of a quoted value inside a message


class YamlRefused(ValueError):
    """YAML that is not read at all; ``str()`` is a German sentence (without the file's name)."""


class _SafeLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """The safe loader; impossible dates (``2025-02-29``) stay text so that a validator can name the field."""

    def construct_yaml_timestamp(self, node):  # noqa: D102 - PyYAML hook
        try:
            return super().construct_yaml_timestamp(node)
        except ValueError:
            return self.construct_scalar(node)


_SafeLoader.add_constructor("tag:yaml.org,2002:timestamp", _SafeLoader.construct_yaml_timestamp)


def _refuse_anchors(text: str) -> None:
    for event in yaml.parse(text, Loader=_SafeLoader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            mark = event.start_mark
            line = f" (Zeile {mark.line + 1})" if mark is not None else ""
            raise YamlRefused(f"YAML-Anker und -Verweise ('&name', '*name') sind nicht erlaubt{line}. "
                              "Bitte jeden Wert ausschreiben.")


def load_yaml(text: str) -> Any:
    """Parse YAML safely; anchors and aliases raise :class:`YamlRefused`, syntax errors ``yaml.YAMLError``.

    The events are read first (a flat, bounded walk), so an alias is refused before any value is built.
    """
    _refuse_anchors(text)
    return yaml.load(text, Loader=_SafeLoader)  # noqa: S506 - a safe loader


def yaml_line(exc: BaseException, offset: int = 1) -> str:
    """" (Zeile N)" from a YAML error's mark, "" without one; ``offset`` turns the 0-based line into the file's."""
    mark = getattr(exc, "problem_mark", None)
    return f" (Zeile {mark.line + offset})" if mark is not None else ""


_repr = reprlib.Repr()
_repr.maxlevel = 2
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 4
_repr.maxstring = QUOTE_LIMIT
_repr.maxother = QUOTE_LIMIT
_repr.maxlong = 40


def quote(value: Any, limit: int = QUOTE_LIMIT) -> str:
    """A short ``repr`` of ``value`` for a message: never longer than ``limit`` (+ "…"), never walks it all."""
    try:
        text = _repr.repr(value)
    except Exception:  # noqa: BLE001 - a value that cannot even be shown
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "…"


def cap(message: str, limit: int = MESSAGE_LIMIT) -> str:
    """``message`` cut to ``limit`` characters (with a German note that it was cut)."""
    message = str(message)
    if len(message) <= limit:
        return message
    return message[:limit] + " … (gekürzt)"


def cap_lines(lines: list[str], max_lines: int = 20, limit: int = MESSAGE_LIMIT) -> str:
    """The first ``max_lines`` of ``lines`` joined with newlines, "… und N weitere" after them, capped."""
    shown = [cap(line, 400) for line in lines[:max_lines]]
    if len(lines) > max_lines:
        shown.append(f"… und {len(lines) - max_lines} weitere")
    return cap("\n".join(shown), limit)


def bad_character(text: str) -> str | None:
    """A German description of the first character ``text`` must not contain, None if it is clean.

    Refused: C0 controls other than tab, line feed and carriage return (NUL among them), DEL and C1
    controls, lone surrogates (which cannot be stored as UTF-8) and the Unicode non-characters
    (U+FDD0..U+FDEF and every code point ending in FFFE or FFFF).
    """
    for position, char in enumerate(text, start=1):
        code = ord(char)
        if code < 32 and char not in "\t\n\r" or 0x7F <= code <= 0x9F:
            what = "ein Nullzeichen" if code == 0 else f"ein Steuerzeichen (U+{code:04X})"
        elif 0xD800 <= code <= 0xDFFF:
            what = f"ein ungültiges Zeichen (U+{code:04X}, ein einzelnes Surrogat)"
        elif 0xFDD0 <= code <= 0xFDEF or (code & 0xFFFE) == 0xFFFE:
            what = f"ein Nichtzeichen (U+{code:04X})"
        else:
            continue
        return f"{what} an Stelle {position}"
    return None


def is_clean(text: str) -> bool:
    """True when :func:`bad_character` finds nothing (NFC or not does not matter)."""
    return bad_character(text) is None


__all__ = ["YamlRefused", "load_yaml", "yaml_line", "quote", "cap", "cap_lines", "bad_character", "is_clean",
           "MESSAGE_LIMIT", "QUOTE_LIMIT"]
