"""One-line helpers for text that goes into a prompt: whitespace folded, structuring tags neutralised."""
import re

# Tags that structure the user message; the same tags inside KB text, titles or
# the question are neutralised so that data cannot close or open a section.
_TAG_RE = re.compile(r"<(\s*/?\s*(?:wissensbasis|konflikte|frage|hinweis|system)\b[^<>]*)>", re.I)


def neutralise_tags(text: str) -> str:
    return _TAG_RE.sub(lambda m: "‹" + m.group(1) + "›", text)


def one_line(text: str) -> str:
    return neutralise_tags(" ".join((text or "").split()))
