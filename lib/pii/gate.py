"""The personal-data gate: find personal data in user text and replace it by stable placeholders.

Pure Python, no Odoo.  Every text a user typed passes through :func:`neutralise` before
it reaches a model (chat or embedding), the question log or a prompt.  Detectors cover
what payroll accountants type into a question about Austrian/German payroll law:

========== ======== ==========================================================================
detector   token    how it is recognised
========== ======== ==========================================================================
svnr       SVNR     10 digits (``1234 150372``): serial, check digit (weights 3 7 9 · 5 8 4 2 1 6,
                    mod 11), birth date DDMMYY; in context ("SV-Nr.", "SV") the shape suffices
iban       IBAN     country + 2 check digits + BBAN, length by country, mod 97 = 1; in context
                    ("IBAN") the shape suffices
bic        BIC      8/11 characters with a known country; in context ("BIC", "SWIFT") or, out of
                    context, only with a digit / "XXX" branch / typical location code
email      EMAIL    the usual address shape
phone      PHONE    +43 / 0043 / 0 prefixes, groups split by spaces, "/" or "-"; enough digits,
                    never a date, a month/year or a number with "," or "."
dob        DOB      a date after "geb.", "geboren am", "Geburtsdatum" (dates of periods pass)
taxnr      TAXNR    Austrian Steuernummer "12-345/6789" (strict shape or in context); German
                    Steuer-ID (11 digits) in context
persnr     PERSNR   an identifier after "Pers.-Nr.", "Personalnummer", "MA-Nr." …
name       PERSON   a name from the supplied list of known people (Odoo: hr.employee, res.partner),
                    exact and folded (case, umlauts: Müller = Mueller = muller)
title_name PERSON   a capitalised name after "Frau", "Herr", "Hr.", "Fr." with optional academic
                    titles (Mag.(FH), Dr., DI, Ing., MSc …)
========== ======== ==========================================================================

This module is the gate itself: it runs the detectors (``lib/pii/detectors.py`` for numbers, codes
and addresses, ``lib/pii/names.py`` for names), merges their findings and writes the placeholders.
``lib/pii/scoring.py`` measures the detectors on a labelled set.

Placeholders are stable per conversation: a :class:`Mapping` remembers value → placeholder;
it is serialised to the client and passed back with the next question of the conversation,
so the same person keeps ``[PERSON_1]``.  The server never stores it.

The gate fails closed: any error inside it raises :class:`PiiGateError`, and callers must
then send nothing.  Its result for a request is a :class:`Gated` object; the Ollama client
refuses requests with user text that do not carry one (see ``lib/llm/client.py``).
"""
from __future__ import annotations

import re
from typing import Iterable

from .detectors import FINDERS, Finding
from .names import COMMON_WORDS, TITLE_WORD, WORD, KnownNames, find_known_names, find_titled, fold

__all__ = [
    "DETECTORS", "TOKENS", "PiiGateError", "Mapping", "Gated", "detect", "neutralise", "gate_request",
    "KB_TEXT", "UngatedRequest", "check_request",
]

# detector → placeholder token, in priority order (earlier wins when spans overlap)
TOKENS = {
    "email": "EMAIL",
    "iban": "IBAN",
    "svnr": "SVNR",
    "taxnr": "TAXNR",
    "dob": "DOB",
    "persnr": "PERSNR",
    "phone": "PHONE",
    "bic": "BIC",
    "name": "PERSON",
    "title_name": "PERSON",
    "known": "",          # values of the conversation's mapping (follow-ups); token from the mapping
}
DETECTORS = tuple(k for k in TOKENS if k != "known")
_PRIORITY = {name: i for i, name in enumerate(TOKENS)}

MAX_TEXT = 20000          # characters; longer input is refused (the agent caps questions far below)
MAX_MAPPING_ITEMS = 200


class PiiGateError(Exception):
    """The gate could not decide; nothing may be sent (fail closed)."""


# --- placeholders per conversation ---------------------------------------------------------
def _value_key(token: str, value: str) -> str:
    if token in ("SVNR", "IBAN", "PHONE", "TAXNR", "PERSNR", "BIC"):
        return token + ":" + re.sub(r"[\s/\-.()+]", "", value).upper()
    if token == "PERSON":
        return token + ":" + " ".join(TITLE_WORD.sub("", fold(value)).split())
    return token + ":" + fold(value).strip()


_PLACEHOLDER = re.compile(r"\[([A-Z]+)_(\d{1,4})\]")


class Mapping:
    """Value → placeholder for one conversation; lives in the request and in the user's browser only."""

    def __init__(self):
        self._by_key: dict[str, str] = {}
        self._values: dict[str, str] = {}      # placeholder → value as typed first
        self._counts: dict[str, int] = {}

    def placeholder(self, token: str, value: str) -> str:
        key = _value_key(token, value)
        found = self._by_key.get(key)
        if found:
            return found
        if len(self._values) >= MAX_MAPPING_ITEMS:
            raise PiiGateError("too many personal values in one conversation")
        number = self._counts.get(token, 0) + 1
        self._counts[token] = number
        found = f"[{token}_{number}]"
        self._by_key[key] = found
        self._values[found] = value
        return found

    def items(self) -> list[tuple[str, str]]:
        """(placeholder, value) pairs in the order they were given."""
        return list(self._values.items())

    def __len__(self):
        return len(self._values)

    def to_dict(self) -> dict:
        return {"v": 1, "items": [[p, v] for p, v in self._values.items()]}

    @classmethod
    def from_dict(cls, data) -> "Mapping":
        """Rebuild what the client sent back; anything malformed gives an empty mapping (placeholders
        restart, nothing leaks: the values are only used to recognise the same value again)."""
        mapping = cls()
        if not isinstance(data, dict) or data.get("v") != 1 or not isinstance(data.get("items"), list):
            return mapping
        for item in data["items"][:MAX_MAPPING_ITEMS]:
            if not (isinstance(item, (list, tuple)) and len(item) == 2
                    and all(isinstance(x, str) for x in item)):
                continue
            placeholder, value = item
            match = _PLACEHOLDER.fullmatch(placeholder)
            value = value.strip()
            if not match or not value or len(value) > 200 or match.group(1) not in set(TOKENS.values()):
                continue
            token, number = match.group(1), int(match.group(2))
            key = _value_key(token, value)
            if key in mapping._by_key or placeholder in mapping._values:
                continue
            mapping._by_key[key] = placeholder
            mapping._values[placeholder] = value
            mapping._counts[token] = max(mapping._counts.get(token, 0), number)
        return mapping


# --- the gate -------------------------------------------------------------------------------
def _find_mapping_values(text: str, mapping: Mapping) -> list[Finding]:
    """Values the conversation masked before ("Novak" after "Herr Novak") are masked again."""
    out = []
    for placeholder, value in mapping.items():
        token = _PLACEHOLDER.fullmatch(placeholder).group(1)
        needles = {value}
        if token == "PERSON":
            needles |= {w for w in WORD.findall(value) if len(w) >= 3 and w[:1].isupper()
                        and fold(w) not in COMMON_WORDS and not TITLE_WORD.fullmatch(fold(w))}
        flags = re.I if token in ("PERSON", "EMAIL", "IBAN", "BIC") else 0
        for needle in needles:
            for m in re.finditer(r"(?<![\w])" + re.escape(needle) + r"(?![\w])", text, flags):
                out.append(Finding("known", m.start(), m.end(), m.group(0), token=token))
    return out


def _allowed_spans(text: str, allow_list: Iterable[str]) -> list[tuple[int, int]]:
    spans = []
    for phrase in allow_list or ():
        phrase = (phrase or "").strip()
        if len(phrase) < 2:
            continue
        for m in re.finditer(r"(?<![\w])" + re.escape(phrase) + r"(?![\w])", text, re.I):
            spans.append((m.start(), m.end()))
    return spans


def _resolve(findings: list[Finding]) -> list[Finding]:
    """Overlapping findings merge into one span; the detector of highest priority names it."""
    findings = sorted(findings, key=lambda f: (f.start, -f.end))
    merged: list[Finding] = []
    for f in findings:
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            best = min((last, f), key=lambda x: _PRIORITY[x.detector])
            start, end = last.start, max(last.end, f.end)
            merged[-1] = Finding(best.detector, start, end, "", token=best.token)
        else:
            merged.append(Finding(f.detector, f.start, f.end, f.text, token=f.token))
    return merged


def detect(text: str, *, known_names: KnownNames | Iterable[str] | None = None, allow_list: Iterable[str] = (),
           detectors: Iterable[str] | None = None, mapping: Mapping | None = None) -> list[Finding]:
    """The findings in ``text`` (merged, allow-listed ones dropped), without placeholders."""
    enabled = set(DETECTORS if detectors is None else detectors)
    unknown = enabled - set(DETECTORS)
    if unknown:
        raise PiiGateError(f"unknown detectors: {sorted(unknown)}")
    found: list[Finding] = []
    for name, func in FINDERS.items():
        if name in enabled:
            found.extend(func(text))
    titled = find_titled(text) if ("title_name" in enabled or "name" in enabled) else []
    if "title_name" in enabled:
        found.extend(titled)
    if "name" in enabled and known_names is not None:
        known = known_names if isinstance(known_names, KnownNames) else KnownNames.build(known_names)
        titled_starts = set()
        for t in titled:
            for w in WORD.finditer(t.text):
                titled_starts.add(t.start + w.start())
        found.extend(find_known_names(text, known, titled_starts))
    if mapping is not None and len(mapping):
        found.extend(_find_mapping_values(text, mapping))
    found = _resolve(found)
    allowed = _allowed_spans(text, allow_list)
    result = []
    for f in found:
        if any(a <= f.start and f.end <= b for a, b in allowed):
            continue
        f.text = text[f.start:f.end]
        if not f.token:
            f.token = TOKENS[f.detector]
        result.append(f)
    return result


def neutralise(text: str, *, known_names: KnownNames | Iterable[str] | None = None, allow_list: Iterable[str] = (),
               detectors: Iterable[str] | None = None, mapping: Mapping | None = None
               ) -> tuple[str, Mapping, list[Finding]]:
    """Replace the personal data in ``text`` by placeholders.

    Returns ``(masked_text, mapping, findings)``; ``mapping`` is the one passed in (extended) or a
    new one.  Raises :class:`PiiGateError` for anything unexpected: the caller must send nothing.
    """
    try:
        if not isinstance(text, str):
            raise PiiGateError("text is not a string")
        if len(text) > MAX_TEXT:
            raise PiiGateError("text too long for the gate")
        mapping = mapping if mapping is not None else Mapping()
        findings = detect(text, known_names=known_names, allow_list=allow_list, detectors=detectors,
                          mapping=mapping)
        pieces, pos = [], 0
        for f in findings:
            f.placeholder = mapping.placeholder(f.token, f.text)
            pieces.append(text[pos:f.start])
            pieces.append(f.placeholder)
            pos = f.end
        pieces.append(text[pos:])
        return "".join(pieces), mapping, findings
    except PiiGateError:
        raise
    except Exception as exc:  # noqa: BLE001 - fail closed: any error means nothing is sent
        raise PiiGateError(f"{type(exc).__name__}: {exc}") from exc


# --- the seal for model requests ------------------------------------------------------------
_SEAL = object()


class Gated:
    """What the gate let through for one request: the masked question, standalone query and history.

    Only :func:`gate_request` makes one (the constructor wants a private seal); the Ollama client
    refuses chat and embedding requests with user text that do not carry it, and checks that the
    user text it sends is the masked text in here.
    """
    __slots__ = ("question", "query", "history", "mapping", "findings", "_texts")

    def __init__(self, seal, question: str, query: str, history: list[dict], mapping: Mapping,
                 findings: list[Finding]):
        if seal is not _SEAL:
            raise TypeError("Gated objects are made by lib.pii.gate_request only")
        self.question = question
        self.query = query
        self.history = history
        self.mapping = mapping
        self.findings = findings
        self._texts = frozenset([question, query] + [h.get("content", "") for h in history])

    def covers(self, text: str) -> bool:
        """True when ``text`` is one of the gated texts or ends with one (a prefixed query embedding)."""
        return text in self._texts or any(t and text.endswith(t) for t in (self.query, self.question))

    @property
    def count(self) -> int:
        return len(self.findings)


def gate_request(question: str, *, query: str | None = None, history: list[dict] | None = None,
                 known_names=None, allow_list: Iterable[str] = (), detectors: Iterable[str] | None = None,
                 mapping: Mapping | None = None) -> Gated:
    """Neutralise everything of one request that carries user text; fail closed (PiiGateError)."""
    try:
        if known_names is not None and not isinstance(known_names, KnownNames):
            known_names = KnownNames.build(known_names)
        mapping = mapping if mapping is not None else Mapping()
        # placeholders already in the conversation (its stored, masked turns) are not given out again, even when
        # the browser lost the mapping (a reload): a new value never reuses "[PERSON_1]" of an earlier turn
        for text in [t.get("content") for t in history or [] if isinstance(t, dict)] + [question]:
            for token, number in _PLACEHOLDER.findall(text if isinstance(text, str) else ""):
                if token in TOKENS.values():
                    mapping._counts[token] = max(mapping._counts.get(token, 0), int(number))
        kw = dict(known_names=known_names, allow_list=allow_list, detectors=detectors, mapping=mapping)
        masked_history = []
        for turn in history or []:
            if not isinstance(turn, dict) or not isinstance(turn.get("content"), str):
                raise PiiGateError("malformed history")
            content, _, _ = neutralise(turn["content"], **kw)
            masked_history.append(dict(turn, content=content))
        masked_q, _, findings = neutralise(question, **kw)
        masked_query = neutralise(query, **kw)[0] if query and query != question else masked_q
        return Gated(_SEAL, masked_q, masked_query, masked_history, mapping, findings)
    except PiiGateError:
        raise
    except Exception as exc:  # noqa: BLE001 - fail closed
        raise PiiGateError(f"{type(exc).__name__}: {exc}") from exc


# --- the check of the Ollama client -----------------------------------------------------------
class _KbText:
    """Marker for model requests without user text: passages of the knowledge base, probes of the code."""
    __slots__ = ()

    def __repr__(self):
        return "KB_TEXT"


KB_TEXT = _KbText()


class UngatedRequest(PiiGateError):
    """A model request without the gate's mark, or with a value the gate masked: refused, nothing sent."""


def check_request(origin, texts: list[str], *, embedding: bool) -> None:
    """Called by ``lib/llm/client.py`` before every chat and embedding request (required ``origin``).

    ``origin`` is :data:`KB_TEXT` (no user text) or the :class:`Gated` of the request.  For a gated
    request no value the conversation's mapping holds may be in the texts (short digit-only values
    such as personnel numbers excepted: "1043" may well be an amount in the knowledge base), and an
    embedding text must be one of the gated texts (after a prefix such as ``query: ``).
    """
    if origin is KB_TEXT:
        return
    if not isinstance(origin, Gated):
        raise UngatedRequest("model request without the personal-data gate's mark")
    for text in texts:
        if not isinstance(text, str):
            raise UngatedRequest("model request with a non-text part")
        if embedding and not origin.covers(text):
            raise UngatedRequest("embedding request with text the gate did not pass")
    payload = "\n".join(texts)
    for _placeholder, value in origin.mapping.items():
        if len(value) < 3 or (len(value) < 6 and value.replace(" ", "").isdigit()) or fold(value) in COMMON_WORDS:
            continue    # may well stand in the knowledge base's own text ("1043", "Lang", "Bauer")
        if re.search(r"(?<!\w)" + re.escape(value) + r"(?!\w)", payload):
            raise UngatedRequest("model request contains a value the gate masked")
