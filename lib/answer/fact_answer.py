"""The answer to a value question composed from the fact table, without the model.

One line per fact, newest first: the concept, its year or period, the value as written, ``[entry-id]`` and
``(Stand YYYY-MM)``; a value whose entry names no year says so ("ohne Jahresangabe"). Contradicting facts get a
⚠ paragraph that names each side's value, entry and Stand; an asked year without a value gets a note with the
latest values. Every cited id is an entry the facts came from, and the facts come from retrieved entries only
(the caller passes them), so the citation rule holds by construction.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from ..facts.compare import Pair
from ..facts.extract import Fact
from ..facts.lookup import Match
from .types import Conflict, missing_year_note

FACT_INTRO = "Aus den Kernwerten der Wissensbasis:"


@dataclass
class FactAnswer:
    """The composed answer, the ids it cites (in order) and the ⚠ conflicts it shows; ``missing_year``: the asked
    year the base holds no value for (the answer names the latest one instead)."""

    text: str
    cited: list[str]
    conflicts: list[Conflict]
    lines: list[dict]
    missing_year: str | None = None


def _basis(fact: Fact) -> str:
    return f" ({fact.basis})" if fact.basis and fact.basis not in fact.concept.lower() else ""


def _when(fact: Fact) -> str:
    if fact.period.explicit:
        return fact.period.label()
    return "ohne Jahresangabe"


# units a table names in its header only ("Werktage (6-Tage-Woche)" over a cell "36"): shown with the number
_COUNTED_UNITS = frozenset({"Tage", "Werktage", "Arbeitstage", "Wochen", "Monate", "Jahre", "Dienstjahre", "Stunden",
                            "Überstunden", "Monatsentgelte"})
_BARE_NUMBER = re.compile(r"\d+(?:,\d+)?")


def shown_value(fact: Fact) -> str:
    """The value as written, with its unit when the cell is a bare count whose unit only the header names
    ("36" under "Werktage (6-Tage-Woche)" is "36 Werktage")."""
    text = fact.text
    if _BARE_NUMBER.fullmatch(text.strip()) and fact.value.unit in _COUNTED_UNITS and fact.value.amount != 1:
        return f"{text.strip()} {fact.value.unit}"
    return text


def fact_line(fact: Fact) -> str:
    """"Geringfügigkeitsgrenze (monatlich) 2025: € 551,10 [lb-gfb-01] (Stand 2025-01)"."""
    return f"{fact.concept}{_basis(fact)} {_when(fact)}: {shown_value(fact)} [{fact.entry_id}] (Stand {fact.stand})"


def _same_value(fact: Fact) -> tuple:
    value = fact.value
    what = (value.amount, value.amount_to, value.unit) if value.amount is not None else (" ".join(fact.text.split()),)
    return (fact.concept.lower(), _basis(fact), _when(fact), *what)


def _merged_lines(facts: list[Fact]) -> list[str]:
    """One line per value: the same value of the same concept and year in several entries ("Geringfügigkeitsgrenze
    2025: € 551,10" in lb-sv-01 and lb-gfb-01) is one line that cites them all."""
    groups: dict = {}
    for fact in facts:
        groups.setdefault(_same_value(fact), []).append(fact)
    lines = []
    for group in groups.values():
        if len(group) == 1:
            lines.append(fact_line(group[0]))
            continue
        # an order of its own (the same line whatever order the facts came in); the value as written by an entry
        # whose cell cites no other ("€ 2 je km ([lb-pen-02])" is the other entry's value, quoted)
        group = sorted(group, key=lambda f: ("[" in f.text, f.entry_id))
        first = group[0]
        by_id = {f.entry_id: f for f in sorted(group, key=lambda f: f.entry_id)}
        if len({f.stand for f in group}) == 1:
            cited = " ".join(f"[{i}]" for i in by_id) + f" (Stand {first.stand})"
        else:
            cited = " ".join(f"[{i}] (Stand {f.stand})" for i, f in by_id.items())
        lines.append(f"{first.concept}{_basis(first)} {_when(first)}: {shown_value(first)} {cited}")
    return lines


_PER_KM = re.compile(r"\b(?:pro|je)\s+(?:km|Kilometer)\b", re.I)
_PER_YEAR = re.compile(r"\b(?:und|pro|je|im)\s+(?:Kalender)?jahr\b|\bjährlich\b", re.I)
_ASKS_MONTH = re.compile(r"\b(?:pro|je|im|in\s+einem|monatlich)\s+Monat\b|\bmonatlich\b|\bmtl\b", re.I)


def _euro(amount: Decimal) -> str:
    """"€ 90", "€ 1.234,50": German digits, cents only when there are any."""
    text = f"{amount.quantize(Decimal('0.01')):,.2f}".replace(",", " ").replace(".", ",").replace(" ", ".")
    return "€ " + (text[:-3] if text.endswith(",00") else text)


def _per_km_lines(match: Match) -> list[str]:
    """A rate per km times the distance the question states ("Pendlereuro bei 45 km": 45 × € 2 = € 90), worked
    out from the fact above it and citing it; one line per rate, only for one stated distance."""
    distances = match.question.points.get("km") or ()
    if len(distances) != 1 or match.missing_year is not None:
        return []
    km = distances[0]
    lines, seen = [], set()
    for fact in match.facts:
        value = fact.value
        if value.unit != "€" or value.amount is None or value.amount_to is not None \
                or not _PER_KM.search(f"{fact.text} {fact.label} {fact.column_header} {fact.concept}"):
            continue
        if (value.amount, _when(fact)) in seen:
            continue
        seen.add((value.amount, _when(fact)))
        km_text = f"{km:f}"
        if "." in km_text:                      # "12.50" → "12,5"; "50" keeps its zero
            km_text = km_text.rstrip("0").rstrip(".")
        km_text = km_text.replace(".", ",")
        total = value.amount * km
        # a yearly rate asked for a month ("bei 45 km im Monat"): the year's sum and its twelfth
        monthly = (f" im Jahr, das sind {_euro(total / 12)} im Monat"
                   if _PER_YEAR.search(fact.text) and _ASKS_MONTH.search(match.question.text) else "")
        lines.append(f"gerechnet für {km_text} km ({_when(fact)}): {km_text} × {_euro(value.amount)} = "
                     f"{_euro(total)}{monthly} [{fact.entry_id}] (Stand {fact.stand})")
    return lines


def _side(fact: Fact, subject: bool) -> str:
    when = fact.period.label() if fact.period.explicit else "ohne Jahresangabe"
    about = f"für „{fact.concept}“ " if subject else ""
    return f"[{fact.entry_id}] (Stand {fact.stand}) nennt {about}{when}: {shown_value(fact)}"


def warning(pair: Pair) -> str:
    """The ⚠ paragraph of one conflicting or outdated pair, both values with entry and Stand."""
    if pair.kind == "conflict":
        return ("⚠ Widerspruch in der Wissensbasis: " + _side(pair.first, True) + "; " + _side(pair.second, False)
                + ". Bitte prüfen.")
    return ("⚠ Widerspruch in der Wissensbasis (veralteter Wert): " + _side(pair.first, True) + "; neuer: "
            + _side(pair.second, False) + ". Bitte prüfen.")


def as_conflict(pair: Pair, outdated: bool = False) -> Conflict:
    """The pair as the answer engine's :class:`Conflict` (the ⚠ note and the evaluation read that); each
    side's value with its year ("2026: 27,5 %", "ohne Jahresangabe: € 0,42")."""
    first, second = pair.first, pair.second

    def value(fact):
        return f"{fact.period.label() if fact.period.explicit else 'ohne Jahresangabe'}: {shown_value(fact)}"

    return Conflict(first.concept, [first.entry_id, second.entry_id],
                    {first.entry_id: value(first), second.entry_id: value(second)},
                    {first.entry_id: first.stand, second.entry_id: second.stand}, outdated)


def conflicts_among(pairs: list[Pair], outdated: bool = False) -> list[Conflict]:
    """The ⚠ conflicts of an answer's entries from the fact comparison: every conflict, and an outdated value
    whose entry names no year of its own (it claims to hold still); one per entry pair and concept. ``outdated``:
    also the values of an earlier year that a newer entry has replaced, marked ``outdated`` (years apart are no
    conflict: they are warned of only when an answer quotes the older value alone)."""
    seen: dict = {}
    out: list[Conflict] = []
    for pair in pairs:
        older = pair.kind == "outdated" and pair.first.period.explicit
        if older and not outdated:
            continue
        key = (frozenset(pair.entry_ids), pair.first.concept)
        if key not in seen:
            seen[key] = (len(out), pair)
            out.append(as_conflict(pair, outdated=older))
        elif older and pair.second.period.newest > seen[key][1].second.period.newest:
            # of the values that replaced an older one, the newest is the one to show ("2025", not "2024")
            seen[key] = (seen[key][0], pair)
            out[seen[key][0]] = as_conflict(pair, outdated=True)
    return out


def _warned(pairs: list[Pair]) -> list[Pair]:
    """The pairs to warn of, each once: an older value replaced by several newer ones ("2024–2025" and "ab 2026"
    of another entry) is warned of once, with the newest."""
    chosen: dict = {}
    for pair in pairs:
        first = pair.first
        key = (pair.kind, first.entry_id, first.concept, first.text, first.period.label()) \
            if pair.kind == "outdated" else warning(pair)
        held = chosen.get(key)
        if held is None or (pair.kind == "outdated" and pair.second.period.newest > held.second.period.newest):
            chosen[key] = pair
    return list(chosen.values())


def compose(match: Match) -> FactAnswer:
    """The answer text of a clear fact match."""
    facts = match.facts
    parts: list[str] = []
    if match.missing_year is not None:
        latest = facts[0].period.label() if facts and facts[0].period.explicit else "ohne Jahresangabe"
        parts.append(missing_year_note(match.missing_year, latest))
    else:
        parts.append(FACT_INTRO)
    parts.append("\n".join("- " + line for line in _merged_lines(facts) + _per_km_lines(match)))
    parts.extend(warning(pair) for pair in _warned(match.pairs))
    cited: list[str] = []
    for fact in list(facts) + [f for p in match.pairs for f in (p.first, p.second)]:
        if fact.entry_id not in cited:
            cited.append(fact.entry_id)
    lines = [{"entry_id": f.entry_id, "text": fact_line(f), "passage": f.passage, "value": f.text,
              "period": f.period.label(), "stand": f.stand, "line": f.line, "column": f.column} for f in facts]
    return FactAnswer("\n\n".join(parts), cited, conflicts_among(match.pairs), lines,
                      None if match.missing_year is None else str(match.missing_year))


def respond_with_facts(prepared, on_delta, model_step, make_result):
    """The answer of a prepared question that the facts answer: the facts first, at once; with the setting
    ``fact_explain`` (and a context built) the model's checked answer follows below them, streamed after the
    facts and never replacing them. ``model_step(on_delta)`` runs the model's part (lib/answer/respond.py),
    ``make_result(**fields)`` builds its AgentAnswer."""
    facts = prepared.fact_answer
    if on_delta:
        on_delta(facts.text)
    # the asked year has no value: the question is not answered (a gap for the curator), the latest value is shown
    result = make_result(status="verweigert" if facts.missing_year else "beantwortet", answer=facts.text,
                         cited_ids=list(facts.cited), conflicts=list(facts.conflicts), answer_mode="facts",
                         from_facts=True,
                         # the table cell of each value (``column`` of its row, -1 for a bullet): the panel marks it
                         quotes=[{"kb_id": line["entry_id"], "passage": line["passage"], "value": line["value"],
                                  "column": line["column"]} for line in facts.lines])
    if not prepared.settings.get("fact_explain") or not prepared.messages:
        return result
    head = facts.text + "\n\n"

    def after_facts(text):
        if text is None:        # a regeneration: the model's part goes, the facts stay
            on_delta(None)
            on_delta(head)
        else:
            on_delta(text)

    if on_delta:
        on_delta("\n\n")
    model = model_step(after_facts if on_delta else None)
    result.timings.update(model.timings)
    if model.status == "beantwortet" and model.answer:
        result.answer = head + model.answer
        result.cited_ids += [i for i in model.cited_ids if i not in result.cited_ids]
        result.quotes += model.quotes
        result.prompt_tokens, result.answer_tokens = model.prompt_tokens, model.answer_tokens
    else:
        result.rejected = model.answer or model.rejected
    return result
