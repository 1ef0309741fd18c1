"""Markdown of an entry to HTML for the entry form (sanitised again by Odoo's Html field)."""
from __future__ import annotations

import re

import markdown

_TITLE_RE = re.compile(r"\A\s*#\s+[^\n]*\n")


def entry_html(body: str) -> str:
    """Render the entry body; the leading H1 is dropped since the form shows the title."""
    text = _TITLE_RE.sub("", body or "", count=1)
    html = markdown.markdown(text, extensions=["tables", "sane_lists"], output_format="html")
    # Kernwerte tables read better with the backend's table styles
    return html.replace("<table>", '<table class="table table-sm table-bordered w-auto">')
