"""What the user sees once the checks are done: the status rule of an answer, pure.

After the last attempt (one regeneration at most) the violations left decide:

=====================  =======================================================  ===========================
violations left        shown                                                    status
=====================  =======================================================  ===========================
none, or only          the answer                                               ``beantwortet``
*repaired* ones
only *minor* ones      the answer under the warning banner                      ``unsicher``
any *severe* one       never the model's prose: the extractive quotes of the    ``unsicher``
                       best entries with a one-line reason, or (no entry
                       retrieved) the refusal with that reason
a refusal              the refusal                                              ``verweigert``
=====================  =======================================================  ===========================

*severe*: an id that was not retrieved, a value not found in its cited entry (or found only for another
year than the statement names, structured), a claim without any citation,
a quote not found (structured), a Stand that is not the cited entry's (structured), unreadable JSON,
echoed instructions. *minor*: a value without its Stand in free text. *repaired*: the code fixed it
before showing (a conflict side or ⚠ mark added, the Stand written from the entry in structured mode,
a citation attached by :func:`lib.answer.freetext.repair_citations`). The rejected model text is kept in the
question log for the curator. In structured mode, statements that failed are dropped and the others
shown; the rule applies to what is left (no statement left = severe).
"""
from __future__ import annotations

from dataclasses import dataclass

SEVERE = frozenset({"unknown_id", "value_not_in_source", "value_wrong_year", "no_citation", "uncited_number", "uncited_claim",
                    "quote_missing", "quote_not_found", "stand_mismatch", "invalid_json", "echo", "empty",
                    "no_statement"})
MINOR = frozenset({"missing_stand"})
REPAIRED = frozenset({"conflict_side_missing", "conflict_unmarked", "repaired", "dropped"})

_REASONS = (   # first match wins: the gravest reason is named
    ("unknown_id", "Die KI-Antwort nannte Quellen, die nicht abgerufen wurden."),
    ("value_not_in_source", "Die KI-Antwort enthielt Werte, die in den zitierten Einträgen nicht stehen."),
    ("value_wrong_year", "Die KI-Antwort nannte Werte für ein Jahr, für das der zitierte Eintrag sie nicht angibt."),
    ("stand_mismatch", "Die KI-Antwort nannte einen Stand, der nicht zum zitierten Eintrag passt."),
    ("no_citation", "Die KI-Antwort enthielt Aussagen ohne Quellenangabe."),
    ("uncited_number", "Die KI-Antwort enthielt Werte ohne Quellenangabe."),
    ("uncited_claim", "Die KI-Antwort enthielt Aussagen ohne Quellenangabe."),
    ("quote_not_found", "Die KI-Antwort belegte ihre Aussagen nicht mit Stellen aus den Einträgen."),
    ("quote_missing", "Die KI-Antwort belegte ihre Aussagen nicht mit Stellen aus den Einträgen."),
    ("invalid_json", "Die KI-Antwort war nicht lesbar."),
    ("echo", "Die KI-Antwort wiederholte Anweisungen statt zu antworten."),
    ("empty", "Die KI-Antwort war leer."),
    ("no_statement", "Die KI-Antwort enthielt keine belegte Aussage."),
)
BANNER = "Nicht jeder Wert ist mit seinem Stand belegt; bitte prüfen Sie die zitierten Einträge."


@dataclass(frozen=True)
class Outcome:
    """``show``: "answer" (the checked model text), "fallback" (extractive quotes) or "refusal"."""

    status: str
    show: str
    reason: str = ""


def codes_of(violations) -> list[str]:
    """Violation codes from Violation objects or "code: detail" strings."""
    out = []
    for v in violations or []:
        code = getattr(v, "code", None) or str(v).split(":", 1)[0].strip()
        out.append(code)
    return out


def reason_for(codes) -> str:
    """The one-line German reason for the gravest severe code ("" when none)."""
    present = set(codes)
    for code, text in _REASONS:
        if code in present:
            return text
    return "Die KI-Antwort hat eine Prüfung nicht bestanden." if present - MINOR - REPAIRED else ""


def decide(violations, *, refused: bool = False, has_blocks: bool = True) -> Outcome:
    """The status rule (module docstring). ``violations``: codes, Violation objects or "code: …" strings;
    unknown codes count as severe (a new check must be classified before it may let text through)."""
    codes = codes_of(violations)
    if refused and not (set(codes) & SEVERE - {"no_citation"}):
        return Outcome("verweigert", "refusal")
    severe = [c for c in codes if c not in MINOR and c not in REPAIRED]
    if severe:
        return Outcome("unsicher" if has_blocks else "verweigert", "fallback" if has_blocks else "refusal",
                       reason_for(severe))
    if any(c in MINOR for c in codes):
        return Outcome("unsicher", "answer", BANNER)
    return Outcome("beantwortet", "answer")


def fallback_answer(extractive: str, reason: str) -> str:
    """The extractive answer under a header that says why no model text is shown.

    ``extractive`` is :func:`lib.answer.extractive.extractive_answer`'s text; its own Notbetrieb header (the first
    paragraph, written for an unreachable model) is replaced.
    """
    head, _sep, body = (extractive or "").partition("\n\n")
    if not head.startswith("**Ohne KI-Antwort") or not body.strip():
        return extractive    # the refusal sentence: nothing was quoted
    header = (f"**Ohne KI-Antwort:** {reason} Die folgenden Abschnitte der Wissensbasis passen am besten "
              "zu Ihrer Frage; sie sind wörtlich zitiert, bitte prüfen Sie sie selbst.")
    return header + "\n\n" + body
