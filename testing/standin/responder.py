"""The stand-in's rule-following chat responder: answers from the ``<wissensbasis>`` of the prompt.

:func:`parse_blocks` reads the context layout that ``lib/answer/prompt.py`` renders (a contract,
checked by ``tests/lib/test_standin_contract.py``); :func:`default_answer` copies sentences of the
best matching blocks with ``[id] (Stand …)`` and marks each ``KONFLIKT:`` line with ⚠.
"""
from __future__ import annotations

import json
import math
import re

from .words import content_words, fold

REFUSAL = "Dazu enthält die Wissensbasis keine Aussage."

_HEADER = re.compile(r"^###\s*\[(?P<id>[^\]\s]+)\]\s*(?P<rest>.*)$")
_STAND = re.compile(r"\bStand\s+(\d{4}-\d{2}(?:-\d{2})?)")
_ID_TOKEN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")


def _between(text: str, tag: str) -> str | None:
    match = re.search(rf"<{tag}>(.*?)</{tag}>", text, re.S)
    return match.group(1) if match else None


def parse_blocks(context: str) -> list[dict]:
    """Blocks ``{"id", "stand", "title", "heading", "text"}`` of a context."""
    blocks: list[dict] = []
    current: dict | None = None
    for line in context.splitlines():
        header = _HEADER.match(line.strip())
        if header:
            stand = _STAND.search(header.group("rest"))
            current = {"id": header.group("id"), "stand": stand.group(1) if stand else "",
                       "title": header.group("rest").split(" · ")[0].strip(),
                       "heading": "", "lines": []}
            blocks.append(current)
        elif current is not None:
            if not current["lines"] and not current["heading"] and line.startswith("Abschnitt:"):
                current["heading"] = line[len("Abschnitt:"):].strip()
            else:
                current["lines"].append(line)
    for block in blocks:
        block["text"] = "\n".join(block.pop("lines")).strip()
    return blocks


def split_sentences(text: str) -> list[str]:
    """Sentences of a section text; table rows become one sentence each."""
    out: list[str] = []
    for raw in text.splitlines():
        line = raw.strip().replace("**", "").replace("`", "")
        if not line or line.startswith("#"):
            continue
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if all(re.fullmatch(r":?-{2,}:?", c) or not c for c in cells):
                continue
            out.append(" – ".join(c for c in cells if c))
            continue
        line = re.sub(r"^(?:[-*+]|\d+\.)\s+", "", line)
        parts = re.split(r"(?<=[.!?])\s+(?=[A-ZÄÖÜ„\"])", line)
        out.extend(p.strip() for p in parts if p.strip())
    return out


def _best_sentences(block: dict, question: set[str], limit: int) -> list[str]:
    sentences = split_sentences(block["text"])
    if not sentences:
        return [block["title"]] if block["title"] else []
    scored = [(len(content_words(s) & question), i) for i, s in enumerate(sentences)]
    hits = sorted((x for x in scored if x[0] > 0), key=lambda x: (-x[0], x[1]))[:limit]
    if not hits:
        return [sentences[0]]
    return [sentences[i] for _, i in sorted(hits, key=lambda x: x[1])]


def _cite(block: dict) -> str:
    stand = f" (Stand {block['stand']})" if block["stand"] else ""
    return f"[{block['id']}]{stand}"


def default_answer(messages: list[dict]) -> str:
    """Deterministic grounded answer to the last user message.

    1. No ``<wissensbasis>`` block, or no block sharing a content word with the
       question: exactly ``Dazu enthält die Wissensbasis keine Aussage.``
    2. Otherwise the best one or two blocks by word overlap (distinct ids; the
       second only if it reaches half the best overlap), each as one or two
       sentences copied from the block plus `` [<id>] (Stand <stand>)``.
    3. Each ``KONFLIKT:`` line adds a paragraph starting with ``⚠ `` that cites
       every listed id present in the context with its best sentence.
    Only ids of blocks in the context are ever cited.
    """
    user = next((m.get("content") or "" for m in reversed(messages)
                 if isinstance(m, dict) and m.get("role") == "user"), "")
    context = _between(user, "wissensbasis") or ""
    question_text = _between(user, "frage")
    if question_text is None:
        question_text = re.sub(r"<(wissensbasis|konflikte)>.*?</\1>", " ", user, flags=re.S)
    question = content_words(question_text)
    blocks = parse_blocks(context)
    best_by_id: dict[str, tuple[int, int, dict]] = {}
    for order, block in enumerate(blocks):
        words = content_words(" ".join((block["title"], block["heading"], block["text"])))
        score = len(words & question)
        if block["id"] not in best_by_id or score > best_by_id[block["id"]][0]:
            best_by_id[block["id"]] = (score, order, block)
    ranked = sorted((v for v in best_by_id.values() if v[0] > 0), key=lambda v: (-v[0], v[1]))
    if not ranked:
        return REFUSAL
    chosen = ranked[:1]
    if len(ranked) > 1 and ranked[1][0] >= max(1, math.ceil(ranked[0][0] / 2)):
        chosen.append(ranked[1])
    paragraphs = [" ".join(_best_sentences(b, question, 2)) + " " + _cite(b)
                  for _, _, b in chosen]
    for line in (_between(user, "konflikte") or "").splitlines():
        if not line.strip().startswith("KONFLIKT:"):
            continue
        ids: list[str] = []
        for token in _ID_TOKEN.findall(line.split("KONFLIKT:", 1)[1]):
            if token in best_by_id and token not in ids:
                ids.append(token)
        if not ids:
            continue
        sides = [" ".join(_best_sentences(best_by_id[i][2], question, 1)) + " "
                 + _cite(best_by_id[i][2]) for i in ids]
        paragraphs.append("⚠ Widersprüchliche Angaben in der Wissensbasis: " + " – ".join(sides))
    return "\n\n".join(paragraphs)


_VALUE = re.compile(r"(?:€\s?\d[\d.]*(?:,\d+)?|\d+(?:,\d+)?\s?%|\d+/\d+)")


def _statement(block: dict, sentence: str, conflict_ids: list[str] | None = None) -> dict:
    words = sentence.split()
    item = {"quellen": [block["id"]], "zitat": " ".join(words[:25]), "text": sentence,
            "werte": [{"wert": v, "stand": block["stand"][:7]} for v in _VALUE.findall(sentence)]}
    if conflict_ids:
        item["widerspruch"] = conflict_ids
    return item


def default_structured_answer(messages: list[dict]) -> str:
    """The structured-mode counterpart of :func:`default_answer` (a request with ``format``): the same
    choice of blocks and sentences as JSON statements ``{"quellen", "zitat", "text", "werte"}``, the
    sentence itself as its quote and the regex-found amounts, percentages and fractions as values with
    the block's Stand; a refusal as ``{"verweigert": true, ...}``; a conflict side carries
    ``widerspruch`` with every side."""
    text = default_answer(messages)
    if text == REFUSAL:
        return json.dumps({"verweigert": True, "grund": "Kein Eintrag passt zur Frage.", "aussagen": []},
                          ensure_ascii=False)
    user = next((m.get("content") or "" for m in reversed(messages)
                 if isinstance(m, dict) and m.get("role") == "user"), "")
    blocks: dict[str, dict] = {}
    for block in parse_blocks(_between(user, "wissensbasis") or ""):
        blocks.setdefault(block["id"], block)
    statements: dict[tuple[str, str], dict] = {}
    for paragraph in text.split("\n\n"):
        conflict = paragraph.startswith("⚠")
        body = paragraph.split(":", 1)[1] if conflict else paragraph
        parts = re.findall(r"(.+?)\s*\[([^\]]+)\](?:\s*\(Stand [^)]*\))?(?:\s*–\s*|$)", body.strip())
        ids = [i for _s, i in parts] if conflict else None
        for sentence, ident in parts:
            key = (ident, sentence.strip())
            if ident in blocks and key in statements and ids:
                statements[key]["widerspruch"] = ids
            elif ident in blocks:
                statements[key] = _statement(blocks[ident], sentence.strip(), ids)
    return json.dumps({"verweigert": False, "grund": "", "aussagen": list(statements.values())},
                      ensure_ascii=False)


_NUMBERED = re.compile(r"^\[(S\d+)\]\s+(.*)$")


def selection_answer(messages: list[dict], fmt=None) -> str:
    """The selection mode's counterpart of :func:`default_answer`: the numbers of the (at most two)
    numbered lines sharing the most content words with the question (ties in text order), plus, for each
    ``KONFLIKT:`` line naming the entry of a chosen line, the best line of every other listed entry; no line
    sharing a word → the refusal ``{"verweigert": true, "saetze": []}``. Only numbers of the schema's enum are
    named."""
    user = _last_user(messages)
    question = content_words(_between(user, "frage") or "")
    allowed = _enum(fmt, "saetze")
    lines: list[tuple[str, str, str]] = []     # (number, entry id, text)
    entry = ""
    for line in (_between(user, "wissensbasis") or "").splitlines():
        header = _HEADER.match(line.strip())
        if header:
            entry = header.group("id")
            continue
        numbered = _NUMBERED.match(line.strip())
        if numbered and entry and (allowed is None or numbered.group(1) in allowed):
            lines.append((numbered.group(1), entry, numbered.group(2)))
    scored = [(len(content_words(text) & question), pos) for pos, (_n, _e, text) in enumerate(lines)]
    best = sorted((x for x in scored if x[0] > 0), key=lambda x: (-x[0], x[1]))[:2]
    if not best:
        return json.dumps({"verweigert": True, "saetze": []})
    chosen = [lines[pos][0] for _s, pos in best]
    for line in (_between(user, "konflikte") or "").splitlines():
        if not line.strip().startswith("KONFLIKT:"):
            continue
        sides = _ID_TOKEN.findall(line.split("KONFLIKT:", 1)[1])
        if not {lines[pos][1] for _s, pos in best} & set(sides):
            continue     # a conflict none of the chosen lines is part of
        for ident in sides:
            side = [(score, pos) for score, pos in scored if lines[pos][1] == ident]
            if side:
                pick = lines[max(side, key=lambda x: (x[0], -x[1]))[1]][0]
                if pick not in chosen:
                    chosen.append(pick)
    return json.dumps({"verweigert": False, "saetze": chosen[:4]})


def split_tokens(text: str, size: int = 4) -> list[str]:
    """Stream pieces of about ``size`` characters."""
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


# --- the optional model steps of the search (lib/search/rerank.py, lib/search/rewrite.py) -----------------------------

_CANDIDATE = re.compile(r"^\d+\.\s*\[(?P<id>[^\]\s]+)\]\s*(?P<text>.*)$")

# colloquial words and their terms in the knowledge base: the stand-in's whole "understanding" of a rewrite
REWRITE_TERMS = {
    "firmenauto": "Dienstwagen Sachbezug", "dienstauto": "Dienstwagen Sachbezug",
    "weihnachtsgeld": "Weihnachtsremuneration Sonderzahlung", "urlaubsgeld": "Urlaubszuschuss Sonderzahlung",
    "krankenstand": "Entgeltfortzahlung Krankenstand", "krank": "Entgeltfortzahlung Krankenstand",
    "abfertigung": "Abfertigung", "pendeln": "Pendlerpauschale",
}


def _last_user(messages: list[dict]) -> str:
    return next((m.get("content") or "" for m in reversed(messages)
                 if isinstance(m, dict) and m.get("role") == "user"), "")


def _enum(fmt, name: str) -> set[str] | None:
    """The ``enum`` of the array property ``name`` of a request's schema (None: no schema or no enum)."""
    if not isinstance(fmt, dict):
        return None
    items = ((fmt.get("properties") or {}).get(name) or {}).get("items") or {}
    return set(items.get("enum") or []) or None


def _schema_keys(fmt) -> set[str]:
    return set((fmt.get("properties") or {}).keys()) if isinstance(fmt, dict) else set()


def is_rerank_request(messages: list[dict], fmt=None) -> bool:
    return "reihenfolge" in _schema_keys(fmt) or "<kandidaten>" in _last_user(messages)


def is_rewrite_request(messages: list[dict], fmt=None) -> bool:
    """A rewrite prompt: its schema, or (without ``format``) a system message that asks for a search query."""
    system = " ".join(m.get("content") or "" for m in messages if isinstance(m, dict) and m.get("role") == "system")
    return "suchanfrage" in _schema_keys(fmt) or ("suchanfrage" in system.lower()
                                                  and "<wissensbasis>" not in _last_user(messages))


def rerank_answer(messages: list[dict], fmt=None) -> str:
    """The candidates of a rerank prompt ordered by how many content words of the question their line
    (title and excerpt) shares, ties in list order; ids outside the schema's enum are never named."""
    user = _last_user(messages)
    question = content_words(_between(user, "frage") or "")
    allowed = _enum(fmt, "reihenfolge")
    scored = []
    for n, line in enumerate((_between(user, "kandidaten") or "").splitlines()):
        match = _CANDIDATE.match(line.strip())
        if match and (allowed is None or match.group("id") in allowed):
            scored.append((-len(content_words(match.group("text")) & question), n, match.group("id")))
    return json.dumps({"reihenfolge": [i for _s, _n, i in sorted(scored)]}, ensure_ascii=False)


def rewrite_answer(messages: list[dict], fmt=None) -> str:
    """A search query: the question's words with colloquial ones replaced by :data:`REWRITE_TERMS`, plus
    the content words of the earlier questions (``<vorher>``) it does not have; numbers stay as they are."""
    user = _last_user(messages)
    words = []
    for word in re.findall(r"§\s*\d+\w*|[\w%€.,-]+", _between(user, "frage") or ""):
        word = word.strip(".,")
        if not word:
            continue
        words.append(REWRITE_TERMS.get(fold(word), word))
    have = content_words(" ".join(words))
    extra = []
    for word in re.findall(r"[^\W\d_]+", _between(user, "vorher") or ""):
        new = content_words(word) - have
        if new:
            have |= new
            extra.append(word)
    text = " ".join(words + extra)
    return json.dumps({"suchanfrage": text}, ensure_ascii=False) if fmt is not None else text
