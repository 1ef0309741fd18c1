"""One answer from the answers to the parts of a question that asks two things (``lib/search/parts.py``).

Each part was answered on its own, through the whole pipeline (facts first, retrieval, answer mode, checks), so
each part's citations are a subset of that part's retrieved entries; the merged answer cites the union, which
is a subset of the union of the retrievals the agent logs. The answer names each part above its answer; a part
the base does not answer keeps its refusal, so the user sees which half is missing.
"""
from __future__ import annotations

import dataclasses
import os

from ..facts.concepts import BASIS_WORDS, KIND_WORDS
from ..text.german import fold_plain, light_stem, word_tokens
from .types import AgentAnswer

# the status of a merged answer: any part answered makes it answered; otherwise the first part's status
_SUMMED = ("generate_ms", "validate_ms", "prompt_ms", "rewrite_ms", "rerank_ms", "embed_ms", "retrieve_ms")


def labels(parts: list[str]) -> list[str]:
    """What each part asks, without the words all parts share at their start (the case, a lead-in)."""
    common = os.path.commonprefix(parts)
    # only a whole shared sentence or lead-in ("DN verdient … . ", "ATZ: "), never half a word or noun
    cut = max(common.rfind(sep) + len(sep) for sep in (". ", ": ", "– ", "? ", "! "))
    common = common[:cut] if cut > 1 else ""
    out = [p[len(common):].strip() for p in parts]
    return [label[:1].upper() + label[1:] if label else part for label, part in zip(out, parts)]


def heading(label: str) -> str:
    return f"**{label}**"


# what a part may ask for without naming a subject of its own: a kind of value, a basis, a unit
_VALUE_NOUNS = KIND_WORDS | frozenset(BASIS_WORDS) | frozenset(light_stem(fold_plain(w)) for w in """
arbeitstag werktag kalendertag dienstjahr stunde prozent euro cent höhe zeit dauer""".split())


def _elliptic(label: str) -> bool:
    """A part that names no subject of its own ("Bis zu welchem Betrag pro Arbeitstag?" after "Sind
    Essensgutscheine steuerfrei"): its nouns, after the first word, only say what kind of value it asks for."""
    nouns = [w for w in word_tokens(label)[1:] if w[:1].isupper() and w.isalpha()]
    return all(light_stem(fold_plain(w)) in _VALUE_NOUNS for w in nouns)


def merge(parts: list[str], answers: list[AgentAnswer]) -> AgentAnswer:
    """The answers to ``parts`` as one AgentAnswer (retrieval and retrieved ids are the caller's). When the first
    part is refused because the base (or the entries it was answered from) does not name its subject, the parts
    that only ask on about it (:func:`_elliptic`) are refused with it: their passages answer another subject."""
    if len(answers) == 1:
        return answers[0]
    first = answers[0]
    if (first.status == "verweigert" and (first.answer or "").startswith("Zu „")
            and all(_elliptic(label) for label in labels(parts)[1:len(answers)])):
        return dataclasses.replace(
            first, timings={k: sum(a.timings.get(k, 0.0) for a in answers) for k in _SUMMED},
            violations=first.violations + ["refused: parts_ask_about_the_refused_subject"])
    statuses = [a.status for a in answers]
    status = "beantwortet" if "beantwortet" in statuses else statuses[0]
    bodies = [(a.answer or "").strip() for a in answers]
    # the same notice opening several parts ("Ohne KI-Antwort (Notbetrieb): …") is read once, above the first
    for n, body in enumerate(bodies[1:], start=1):
        first_line = body.split("\n", 1)[0]
        if first_line.startswith("**") and bodies[0].startswith(first_line):
            bodies[n] = body[len(first_line):].strip()
    texts = [heading(label) + "\n" + body for label, body in zip(labels(parts), bodies)]
    cited, conflicts, seen = [], [], set()
    for a in answers:
        cited += [i for i in a.cited_ids if i not in cited]
        for c in a.conflicts:
            key = tuple(getattr(c, "entry_ids", ()) or ()) + (getattr(c, "key", ""),)
            if key not in seen:
                seen.add(key)
                conflicts.append(c)
    timings = {k: sum(a.timings.get(k, 0.0) for a in answers) for k in _SUMMED}
    modes = [a.answer_mode for a in answers if a.answer_mode != "facts"]
    return AgentAnswer(
        status=status, answer="\n\n".join(texts), cited_ids=cited,
        violations=[f"Teil {n}: {v}" for n, a in enumerate(answers, 1) for v in a.violations],
        notice=next((a.notice for a in answers if a.notice), None), conflicts=conflicts, timings=timings,
        regenerations=sum(a.regenerations for a in answers), gate_refused=all(a.gate_refused for a in answers),
        prompt_tokens=sum(a.prompt_tokens for a in answers), answer_tokens=sum(a.answer_tokens for a in answers),
        answer_mode=modes[0] if modes else "facts", quotes=[q for a in answers for q in a.quotes],
        rejected="\n\n".join(a.rejected for a in answers if a.rejected),
        steps=next((a.steps for a in answers if a.steps), {}), from_facts=all(a.from_facts for a in answers),
        server=next((a.server for a in answers if a.server), ""))


def merge_retrievals(retrievals):
    """One retrieval (models/pv_kb_retriever.RetrievalResult, a dataclass) of the parts' retrievals: their entries
    taken in turn by rank (each part's best first), without repeats; chunks and entry data joined, timings
    summed. The question log and the citation rule read it."""
    retrievals = [r for r in retrievals if r is not None]
    if not retrievals:
        return None
    first = retrievals[0]
    entries, seen = [], set()
    for rank in range(max(len(r.entries) for r in retrievals)):
        for r in retrievals:
            if rank < len(r.entries) and r.entries[rank].entry_id not in seen:
                seen.add(r.entries[rank].entry_id)
                entries.append(r.entries[rank])
    chunks, info = {}, {}
    for r in retrievals:
        chunks.update(r.chunks)
        info.update(r.entry_info)
    timings = {}
    for r in retrievals:
        for key, value in r.timings.items():
            if isinstance(value, (int, float)):
                timings[key] = timings.get(key, 0.0) + value
    return dataclasses.replace(first, entries=entries, chunks=chunks, entry_info=info, timings=timings,
                               degraded=next((r.degraded for r in retrievals if r.degraded), None))
