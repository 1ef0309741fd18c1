"""The refusal gate: decide before generation whether the base clearly holds nothing.

Measured on comparable data, no single similarity threshold separates
answerable from unanswerable questions, so the gate is conservative: it
refuses only when *both* signals are empty-handed — no full-text match for any
content word of the question, and a dense similarity below a floor that every
answerable gold question clears with margin (see docs/measurements.md, "Refusal gate").
Everything above the gate goes to the model, which refuses under its rules
when the context does not answer the question. One more refusal before generation: a question on another
country's law whose country no passage of the context names (:func:`other_country`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .types import REFUSAL_TEXT

# Cosine similarity floor for the best dense hit.  It depends on the embedding
# model (e5 models give every pair a high similarity), so it is a setting
# (`gate_dense_floor`); 0.0 means the dense signal never counts as empty.
# `pv_kb eval` prints the lowest score of an answerable gold question to
# calibrate it (docs/measurements.md, "Refusal gate").
DENSE_FLOOR = 0.0


@dataclass
class Evidence:
    fts_hits: int = 0                    # chunks matching the full-text query
    dense_best: float | None = None      # best cosine similarity (None: no dense signal)
    has_terms: bool = True               # the question had searchable content words
    topics: list[str] = field(default_factory=list)   # topics of the nearest entries, best first

    @classmethod
    def from_retrieval(cls, retrieval) -> "Evidence":
        data = getattr(retrieval, "evidence", None) or {}
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


@dataclass
class Verdict:
    refuse: bool
    reason: str
    topics: list[str]


def decide(evidence: Evidence, dense_floor: float | None = None) -> Verdict:
    """Refuse without calling the model only when the evidence is clearly empty."""
    dense_floor = DENSE_FLOOR if dense_floor is None else dense_floor
    no_text = evidence.fts_hits == 0
    if evidence.dense_best is None:
        weak_dense = True
    else:
        weak_dense = evidence.dense_best < dense_floor
    if no_text and weak_dense:
        reason = "no_match" if evidence.has_terms else "no_terms"
        return Verdict(True, reason, evidence.topics[:3])
    return Verdict(False, "evidence", evidence.topics[:3])


def refusal_answer(verdict: Verdict) -> str:
    """The honest refusal, naming the nearest clusters when there are any."""
    text = REFUSAL_TEXT
    if verdict.topics:
        names = ", ".join(t.replace("_", " ") for t in verdict.topics)
        text += f"\n\nAm nächsten liegen die Themen der Wissensbasis: {names}."
    return text


# Another state's law: the base is on Austrian payroll. A question that names another country ("die
# Minijob-Grenze in Deutschland", "der AHV-Beitrag in der Schweiz") asks for that country's rules; when no
# passage of the context names the country, a nearby Austrian passage would be the wrong answer.
_COUNTRIES = {
    "Deutschland": r"deutschland|deutsche[nmrs]?\s+(?:arbeitgeber|arbeitnehmer|recht|steuer|sozialversicherung|"
                   r"lohn|finanzamt|rentenversicherung|krankenkasse|firma|filiale|betrieb)",
    "Schweiz": r"schweiz|schweizer\w*",
    "Italien": r"italien\w*", "Slowenien": r"slowenien", "Ungarn": r"ungarn", "Tschechien": r"tschechien",
    "Slowakei": r"slowakei", "Liechtenstein": r"liechtenstein", "Frankreich": r"frankreich", "Spanien": r"spanien",
    "Polen": r"polen", "Kroatien": r"kroatien", "Niederlande": r"niederlande\w*", "Belgien": r"belgien",
    "Luxemburg": r"luxemburg", "Großbritannien": r"gro(?:ß|ss)britannien|england",
    "USA": r"usa|vereinigten\s+staaten",
}
_COUNTRY_RE = {name: re.compile(rf"\b(?:{pattern})\b", re.I) for name, pattern in _COUNTRIES.items()}


def other_country(question: str, texts) -> str | None:
    """The country other than Austria the question names and no text of the context names (its name), else
    None: then the question asks for another state's law, which the base does not hold."""
    for name, pattern in _COUNTRY_RE.items():
        if pattern.search(question or "") and not any(pattern.search(t or "") for t in texts):
            return name
    return None
