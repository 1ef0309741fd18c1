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
from pathlib import Path

import yaml

KINDS = ("fact", "paraphrase", "compound", "multi", "conflict", "refuse", "injection")
ANSWERABLE_KINDS = ("fact", "paraphrase", "compound", "multi", "conflict")
_KEYS = ("id", "question", "kind", "expected_ids", "answer_must_contain", "answer_must_not_contain")


class GoldsetWarning(UserWarning):
    """Something in a gold set that is read but not used (unknown keys): the run goes on."""


class GoldsetError(ValueError):
    """The gold set cannot be used; ``problems`` lists every finding in German."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


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


def _read(text_or_path) -> tuple[str, str]:
    """(YAML text, name for messages)."""
    if isinstance(text_or_path, Path):
        return text_or_path.read_text(encoding="utf-8"), str(text_or_path)
    text = str(text_or_path)
    if "\n" not in text and (text.endswith((".yml", ".yaml")) or os.path.isfile(text)):
        try:
            return Path(text).read_text(encoding="utf-8"), text
        except OSError as exc:
            raise GoldsetError([f"Die Goldfragen-Datei {text} lässt sich nicht lesen ({exc.strerror}). "
                                "Bitte Pfad und Berechtigungen prüfen."]) from exc
    return text, "Goldfragen"


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
    """Read a gold set (YAML text, or a path to a .yml/.yaml file) and validate it.

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
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (Zeile {mark.line + 1})" if mark is not None else ""
        raise GoldsetError([f"{name} ist kein gültiges YAML{where}. Bitte die Einrückung und die "
                            "Anführungszeichen prüfen."]) from exc
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
        qid = str(item.get("id") or "").strip()
        label = qid or f"Nr. {position}"
        if not qid:
            problems.append(f"Frage {label}: Die id fehlt. Bitte eine eindeutige id wie q-sz-01 eintragen.")
        elif qid in seen:
            problems.append(f"Frage {qid}: Die id kommt mehrfach vor. Bitte jeder Frage eine eigene id geben.")
        seen.add(qid)
        for key in item:
            if key in _KEYS:
                continue
            close = difflib.get_close_matches(str(key), _KEYS, n=1, cutoff=0.75)
            if close and close[0] not in item:
                problems.append(f"Frage {label}: Unbekannter Schlüssel '{key}'. Gemeint ist wohl '{close[0]}'.")
            else:
                unknown_keys.setdefault(str(key), []).append(label)
        question = item.get("question")
        if not isinstance(question, str) or not question.strip():
            problems.append(f"Frage {label}: Der Fragetext (question) fehlt.")
            question = ""
        kind = str(item.get("kind") or "").strip()
        if kind not in KINDS:
            shown = f"'{kind}'" if kind else "keine"
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
                problems.append(f"Frage {label}: Die erwarteten Einträge {', '.join(unknown)} gibt es in der "
                                "Wissensbasis nicht. Bitte die ids prüfen.")
        questions.append(GoldQuestion(qid, question.strip(), kind, expected, must, must_not))
    if problems:
        raise GoldsetError(problems)
    notes = []
    for key, labels in unknown_keys.items():
        shown = ", ".join(labels[:3]) + (f" und {len(labels) - 3} weiteren" if len(labels) > 3 else "")
        notes.append(f"{name}: Schlüssel '{key}' ist unbekannt und wird nicht ausgewertet (bei Frage {shown}).")
    return GoldSet(questions, meta, notes, name)


def load_goldset(text_or_path, known_ids: set[str] | None = None) -> list[GoldQuestion]:
    """The questions of :func:`read_goldset`; its warnings are issued as :class:`GoldsetWarning`."""
    goldset = read_goldset(text_or_path, known_ids)
    for note in goldset.warnings:
        warnings.warn(note, GoldsetWarning, stacklevel=2)
    return goldset.questions

