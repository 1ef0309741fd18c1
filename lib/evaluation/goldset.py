"""The gold set file format (docs/eval-format.md): reading and validating a set of gold questions.

:func:`read_goldset` reads and validates the YAML (plain list or wrapped ``{questions: [...]}``;
unknown keys are metadata and give warnings); :func:`load_goldset` returns just its questions. The
question kinds are :data:`KINDS`; :data:`ANSWERABLE_KINDS` are those a good answer answers (the others
are refused). What is measured on a gold set is in lib/evaluation/metrics.py (retrieval and answers),
lib/evaluation/bakeoff.py (chat models compared) and lib/evaluation/protocol.py (tuning and test parts). Pure Python,
no Odoo.
"""
from __future__ import annotations

import difflib
import os
import warnings
from dataclasses import dataclass, field

import yaml

from ..text import untrusted
from ..text.untrusted import quote

KINDS = ("fact", "paraphrase", "compound", "multi", "conflict", "refuse", "injection")
ANSWERABLE_KINDS = ("fact", "paraphrase", "compound", "multi", "conflict")
_KEYS = ("id", "question", "kind", "expected_ids", "answer_must_contain", "answer_must_not_contain")


class GoldsetWarning(UserWarning):
    """Something in a gold set that is read but not used (unknown keys): the run goes on."""


class GoldsetError(ValueError):
    """The gold set cannot be used; ``problems`` lists every finding in German."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        # what a user sees is bounded: the first findings, each cut, and how many more there are
        super().__init__(untrusted.cap_lines(problems))


@dataclass
class GoldQuestion:
    """One question of a gold set."""

    id: str
    question: str
    kind: str
    expected_ids: list[str] = field(default_factory=list)
    answer_must_contain: list[str] = field(default_factory=list)
    answer_must_not_contain: list[str] = field(default_factory=list)


@dataclass
class GoldSet:
    """A read gold set: its questions, the top-level metadata of the wrapped form, and the warnings."""

    questions: list[GoldQuestion]
    meta: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    name: str = "Goldfragen"


def _read(source) -> tuple[str, str]:
    """(YAML text, name for messages). A text is always the gold set itself, never a path: only a path
    object (``pathlib.Path``, given by server-side code such as the command line) names a file."""
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
        try:
            with open(path, "rb") as handle:
                raw = handle.read()
        except OSError as exc:
            raise GoldsetError([f"Die Goldfragen-Datei {path} lässt sich nicht lesen ({exc.strerror}). "
                                "Bitte Pfad und Berechtigungen prüfen."]) from exc
        return _decode(raw, str(path)), str(path)
    if isinstance(source, (bytes, bytearray)):
        return _decode(bytes(source), "Goldfragen"), "Goldfragen"
    if isinstance(source, str):
        return source, "Goldfragen"
    raise TypeError("a gold set is YAML text, bytes or a path object")


def _decode(raw: bytes, name: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise GoldsetError([f"{name} ist nicht UTF-8-kodiert (ungültiges Byte an Position {exc.start}). "
                            "Bitte die Datei als UTF-8 speichern."]) from None


def _string_list(value, label: str, qid: str, problems: list[str]) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) for v in value):
        problems.append(f"Frage {qid}: '{label}' muss eine Liste von Texten sein, z. B. [lb-sz-02].")
        return []
    return [str(v).strip() for v in value if str(v).strip()]


def read_goldset(text_or_path, known_ids: set[str] | None = None) -> GoldSet:
    """Read a gold set (YAML text or bytes, or a ``pathlib.Path`` to a file) and validate it.

    A text is always the gold set itself: a line that names a file is not read (paths come only from
    server-side code such as the command line, as path objects).

    Accepted shapes: a list of questions, or a mapping with the list under
    ``questions`` (its other top-level keys are metadata, kept in
    ``GoldSet.meta``, e.g. ``split``, see :mod:`lib.evaluation.protocol`).
    Checks: every question a mapping; id, question and kind present; ids
    unique; kind one of :data:`KINDS`; ``refuse`` questions expect no
    entries; list fields are lists of strings; a misspelt key whose proper
    form is missing ("expected_id" without "expected_ids"); with
    ``known_ids``, every expected id exists in the knowledge base. All
    findings are collected and raised together as :class:`GoldsetError`,
    each a German sentence naming the question. Other unknown keys
    (``note``, ``expected_behaviour``, ...) are metadata: one German warning
    per key in ``GoldSet.warnings``, and the question is used.
    """
    text, name = _read(text_or_path)
    try:
        data = untrusted.load_yaml(text)
    except untrusted.YamlRefused as exc:
        raise GoldsetError([f"{name} wird nicht gelesen: {exc}"]) from None
    except yaml.YAMLError as exc:
        raise GoldsetError([f"{name} ist kein gültiges YAML{untrusted.yaml_line(exc)}. Bitte die Einrückung "
                            "und die Anführungszeichen prüfen."]) from None
    except (Exception, RecursionError) as exc:  # noqa: BLE001 - any loader failure is the file's fault
        raise GoldsetError([f"{name} konnte nicht gelesen werden ({type(exc).__name__}). Bitte die "
                            "YAML-Syntax prüfen."]) from None
    meta: dict = {}
    if isinstance(data, dict) and "questions" in data:
        meta = {str(key): value for key, value in data.items() if key != "questions"}
        data = data["questions"]
    if not isinstance(data, list):
        raise GoldsetError([f"{name} muss eine Liste von Fragen sein (jede Frage beginnt mit '- id: ...'), "
                            "oder eine Zuordnung mit dieser Liste unter 'questions:'."])

    problems: list[str] = []
    unknown_keys: dict[str, list[str]] = {}
    questions: list[GoldQuestion] = []
    seen: set[str] = set()
    for position, item in enumerate(data, start=1):
        if not isinstance(item, dict):
            problems.append(f"Eintrag {position}: Eine Frage muss aus Schlüsseln wie id, question, kind bestehen.")
            continue
        raw_id = item.get("id")
        qid = str(raw_id).strip() if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) else ""
        label = quote(qid, 60)[1:-1] if qid else f"Nr. {position}"
        if raw_id not in (None, "") and not qid:
            problems.append(f"Frage {label}: Die id muss ein Text sein, nicht {quote(raw_id, 40)}.")
        elif not qid:
            problems.append(f"Frage {label}: Die id fehlt. Bitte eine eindeutige id wie q-sz-01 eintragen.")
        elif qid in seen:
            problems.append(f"Frage {label}: Die id kommt mehrfach vor. Bitte jeder Frage eine eigene id geben.")
        seen.add(qid)
        for key in item:
            if key in _KEYS:
                continue
            shown_key = quote(key, 40)
            close = difflib.get_close_matches(str(key), _KEYS, n=1, cutoff=0.75) if len(str(key)) <= 40 else []
            if close and close[0] not in item:
                problems.append(f"Frage {label}: Unbekannter Schlüssel {shown_key}. Gemeint ist wohl '{close[0]}'.")
            else:
                unknown_keys.setdefault(shown_key, []).append(label)
        question = item.get("question")
        if not isinstance(question, str) or not question.strip():
            problems.append(f"Frage {label}: Der Fragetext (question) fehlt.")
            question = ""
        raw_kind = item.get("kind")
        kind = raw_kind.strip() if isinstance(raw_kind, str) else ""
        if kind not in KINDS:
            shown = quote(kind or raw_kind, 40) if (kind or raw_kind) else "keine"
            problems.append(f"Frage {label}: Art {shown} ist unbekannt. Erlaubt sind: {', '.join(KINDS)}.")
        expected = _string_list(item.get("expected_ids"), "expected_ids", label, problems)
        must = _string_list(item.get("answer_must_contain"), "answer_must_contain", label, problems)
        must_not = _string_list(item.get("answer_must_not_contain"), "answer_must_not_contain", label, problems)
        if kind == "refuse" and expected:
            problems.append(f"Frage {label}: Eine refuse-Frage erwartet keine Einträge; "
                            "bitte expected_ids leer lassen ([]).")
        if known_ids is not None:
            unknown = [e for e in expected if e not in known_ids]
            if unknown:
                problems.append(f"Frage {label}: Die erwarteten Einträge {untrusted.cap(', '.join(unknown), 200)} gibt es in der "
                                "Wissensbasis nicht. Bitte die ids prüfen.")
        questions.append(GoldQuestion(qid, question.strip(), kind, expected, must, must_not))
    if problems:
        raise GoldsetError(problems)
    notes = []
    for key, labels in unknown_keys.items():
        shown = ", ".join(labels[:3]) + (f" und {len(labels) - 3} weiteren" if len(labels) > 3 else "")
        notes.append(f"{name}: Schlüssel {key} ist unbekannt und wird nicht ausgewertet (bei Frage {shown}).")
    return GoldSet(questions, meta, notes, name)


def load_goldset(text_or_path, known_ids: set[str] | None = None) -> list[GoldQuestion]:
    """The questions of :func:`read_goldset`; its warnings are issued as :class:`GoldsetWarning`."""
    goldset = read_goldset(text_or_path, known_ids)
    for note in goldset.warnings:
        warnings.warn(note, GoldsetWarning, stacklevel=2)
    return goldset.questions

