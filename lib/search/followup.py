"""Follow-up questions: a standalone retrieval query from the question and the conversation.

Runs before retrieval (the agent passes the result to the retriever as ``query``);
deterministic, no model.
"""
from __future__ import annotations

from ..text.german import content_words, light_stem, fold_plain, word_tokens

_FOLLOWUP_STARTS = (
    "und", "aber", "also", "sowie", "auch", "oder", "bzw", "was ist mit", "wie ist es mit",
    "wie sieht es", "wie schaut es", "was ist bei", "was wenn",
)
_ANAPHORS = frozenset(
    fold_plain(w)
    for w in """er ihn ihm da dafür dabei dazu davon damit daran darauf darüber darin dort hier
    hierzu hierfür hierbei dann dasselbe derselbe dieselbe ebenso ebenfalls dessen deren""".split()
)
_DETERMINERS = frozenset(
    fold_plain(w) for w in "der die das dem den dies diese dieser dieses diesem diesen".split()
)



def _is_followup(question: str) -> bool:
    tokens = word_tokens(question)
    if not tokens:
        return False
    content = content_words(tokens)
    if not content:
        return True
    folded = fold_plain(" ".join(tokens))
    starts = any(folded == s or folded.startswith(s + " ") for s in _FOLLOWUP_STARTS)
    anaphor = False
    for pos, token in enumerate(tokens):
        low = fold_plain(token)
        if low in _ANAPHORS or (token == "sie" and pos > 0):
            anaphor = True
        elif low in _DETERMINERS:
            nxt = tokens[pos + 1] if pos + 1 < len(tokens) else ""
            if not nxt[:1].isupper():  # pronoun use: not followed by a noun
                anaphor = True
    return (starts or anaphor) and len(content) <= 3


def standalone_query(question: str, history: list[dict]) -> str:
    """A retrieval query for ``question``: follow-ups get the key terms of earlier questions.

    A follow-up ("Und für Arbeiter?", "Was gilt da ab 2026?") is the question
    followed by up to six nouns of the last one or two user questions that it
    does not already contain (at most 150 added characters). Deterministic, no
    model. A standalone question, or one without history, is returned unchanged.
    """
    question = (question or "").strip()
    previous = [
        t["content"].strip()
        for t in history or []
        if isinstance(t, dict) and t.get("role") == "user" and isinstance(t.get("content"), str)
    ]
    if previous and previous[-1] == question:
        previous.pop()
    if not previous or not _is_followup(question):
        return question
    have = {light_stem(fold_plain(t)) for t in word_tokens(question)}
    terms: list[str] = []
    for earlier in reversed(previous[-2:]):
        words = content_words(word_tokens(earlier))
        nouns = [w for w in words if w[:1].isupper()] or words
        for word in nouns:
            key = light_stem(fold_plain(word))
            if key not in have:
                have.add(key)
                terms.append(word)
        if len(terms) >= 3:
            break
    added = ""
    for term in terms[:6]:
        if len(added) + len(term) + 1 > 150:
            break
        added += " " + term
    return question + added
