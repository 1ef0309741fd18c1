"""JSON out of a chat model's reply, the one lenient reader of the structured answer and the rerank reply.

Models asked for JSON (even under Ollama's ``format``) wrap it in a Markdown fence or in a sentence; the reader
takes the whole text, else the span from the first opening to the last closing bracket. Nothing here imports Odoo.
"""
from __future__ import annotations

import json
import re

_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def loads_lenient(content: str, brackets: str = "{"):
    """The decoded JSON of ``content``, or None: the whole text (a ``` fence removed), else for each opening
    bracket of ``brackets`` in turn (``"{"`` objects, ``"["`` lists) the span up to the last closing one."""
    text = (content or "").strip()
    if text.startswith("```"):
        text = _FENCE.sub("", text)
    try:
        return json.loads(text)
    except ValueError:
        pass
    for opener in brackets:
        closer = {"{": "}", "[": "]"}[opener]
        start, end = text.find(opener), text.rfind(closer)
        if 0 <= start < end:
            try:
                return json.loads(text[start:end + 1])
            except ValueError:
                continue
    return None
