"""Pathological entry bodies and batches: what an attacker would upload to exhaust the import.

Used by the tests (tests/lib/test_hostile_rendering.py) and the benchmark (scripts/bench/bench_hostile.py).
Each body generator takes a target size in characters; :func:`hostile_batch` wraps bodies into a batch
(entries, kb.json) and :func:`as_zip` packs it the way the browser upload gets it.
"""
from __future__ import annotations

import io
import json
import zipfile


def _table(n: int) -> str:
    rows = max(n // 12, 1)
    return "| a | b |\n|---|---|\n" + "".join(f"| {i} | x |\n" for i in range(rows))


BODIES = {
    # Python-Markdown's link search: every "[" scans to its "]" or the end of the block
    "bracket_run": lambda n: "[" * n,
    "bracket_paren_run": lambda n: "[](" * (n // 3),
    "image_run": lambda n: "![" * (n // 2),
    "nested_brackets": lambda n: "[" * (n // 2) + "]" * (n // 2),
    "brackets_per_line": lambda n: "\n".join("[" * 60 for _ in range(n // 61)),
    "link_no_close": lambda n: "[a](" + "(" * n,
    # emphasis and code spans
    "emphasis_run": lambda n: "*" * n,
    "emphasis_words": lambda n: "*a **b " * (n // 7),
    "underscore_words": lambda n: "_a __b " * (n // 7),
    "backtick_pairs": lambda n: "`a``" * (n // 4),
    # raw HTML and entities
    "lt_run": lambda n: "<" * n,
    "tag_opens": lambda n: "<a " * (n // 3),
    "html_comment_open": lambda n: "<!--" + "x" * n,
    "entities": lambda n: "&#x" * (n // 3),
    # nesting
    "nested_list": lambda n: "\n".join("  " * i + "- x" for i in range(min(n // 20, 2000))),
    "nested_ordered": lambda n: "\n".join("    " * i + "1. x" for i in range(min(n // 40, 1000))),
    "nested_quote": lambda n: ">" * n + " x",
    "quote_ladder": lambda n: "\n".join(">" * i + " x" for i in range(min(n // 50, 2000))),
    "loose_list": lambda n: "- x\n\n" * (n // 5),
    "flat_list": lambda n: "- x\n" * (n // 4),
    # long structures
    "long_table": lambda n: _table(n),
    "wide_table": lambda n: "|" + "a|" * (n // 4) + "\n|" + "-|" * (n // 4) + "\n",
    "long_line": lambda n: "wort " * (n // 5),
    "atx_headers": lambda n: "### x\n" * (n // 6),
    "setext_headers": lambda n: "x\n=\n" * (n // 4),
    "reference_links": lambda n: "".join(f"[r{i}]: http://x/{i}\n" for i in range(n // 40))
    + "".join(f"[a][r{i}] " for i in range(n // 40)),
    "escapes": lambda n: "\\[" * (n // 2),
}


def entry(kb_id: str, body: str) -> bytes:
    return (f"---\nid: {kb_id}\ntitle: Eintrag {kb_id}\nstand: 2026-01\ntopic: test\nsource: Test\n---\n"
            f"# Eintrag\n\n## Zusammenfassung\n{body}\n").encode("utf-8")


def hostile_batch(bodies: dict[str, str]) -> dict[str, bytes]:
    """A batch with one entry per body (ids "hx-<n>-01") and a matching kb.json."""
    files: dict[str, bytes] = {}
    records = []
    for number, body in enumerate(bodies.values()):
        kb_id = f"hx-{number}-01"
        files[f"dokumente/{kb_id}.md"] = entry(kb_id, body)
        records.append({"id": kb_id, "title": f"Eintrag {kb_id}", "stand": "2026-01", "topic": "test",
                        "source": "Test", "file": f"dokumente/{kb_id}.md"})
    files["kb.json"] = json.dumps({"count": len(records), "entries": records}).encode()
    return files


def as_zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, data in files.items():
            archive.writestr(f"wissensbasis/{name}", data)
    return buffer.getvalue()
