"""Observable results of the demo KB that a refactor must not change.

:func:`demo_pins` computes, from ``data/demo_kb`` and the current code,

* ``chunks``: per entry id, each chunk as ``[position, section_key,
  heading_path, content_hash]`` (the hash decides what is re-embedded);
* ``conflicts``: the Kernwerte conflicts detected over *all* demo entries
  (key, sides, values, Stand), in the detector's order;

and :func:`synthetic_pins` the same over the evaluation's 601-entry synthetic
base (a chunk digest and the conflicts' keys and sides), which exercises the
German folding and key matching on many more rows.

``scripts/write_pins.py`` writes the result to ``testing/data/demo_pins.json``;
``tests/lib/test_pins.py`` recomputes it and compares. A change that alters
either on purpose rewrites the file in the same commit and says why.
Used by the pure suite only (it imports the engine as ``lib.*``).
"""
from __future__ import annotations

import json
import pathlib
from dataclasses import asdict

from lib.kb import chunking, batch as kb_batch, format as kb_format, zip_guard
from lib.answer.conflicts import detect_conflicts
from lib.answer.types import EntryFacts

from . import synthetic_kb

REPO = pathlib.Path(__file__).resolve().parents[1]
DEMO_KB = REPO / "data" / "demo_kb" / "wissensbasis"
PINS = pathlib.Path(__file__).resolve().parent / "data" / "demo_pins.json"


def demo_entries(root: pathlib.Path = DEMO_KB) -> list[kb_format.ParsedEntry]:
    """The demo KB's entries as the importer parses them (a batch that must be valid)."""
    files = zip_guard.kb_root_files(zip_guard.read_folder(str(root)))
    # read as the command line reads a folder: no total render budget (that guards browser uploads, and a
    # loaded machine must not turn the pinned data into "render_costly")
    batch = kb_batch.load_batch(files, known_ids=set(), render_seconds=None)
    if not batch.ok:
        raise ValueError(f"the demo KB does not parse: {batch.errors}")
    return sorted(batch.entries, key=lambda e: e.id)


def demo_pins(root: pathlib.Path = DEMO_KB) -> dict:
    """Chunk hashes and conflicts of the demo KB, as plain JSON data."""
    entries = demo_entries(root)
    chunks: dict[str, list] = {}
    facts: list[EntryFacts] = []
    for entry in entries:
        pieces = chunking.chunk_entry(entry)
        chunks[entry.id] = [[c.position, c.section_key, c.heading_path, c.content_hash] for c in pieces]
        # what the agent passes: the entry's Kernwerte chunks joined in order
        kernwerte = "\n".join(c.text for c in pieces if c.section_key == "kernwerte").strip()
        facts.append(EntryFacts(entry_id=entry.id, title=entry.title, stand=entry.stand, topic=entry.topic,
                                legal_bases=list(entry.legal_bases), kernwerte_text=kernwerte))
    conflicts = [asdict(c) for c in detect_conflicts(facts)]
    return {"entries": len(entries), "chunks": chunks, "conflicts": conflicts}


def synthetic_pins(entries: int = 601, seed: int = 7) -> dict:
    """The same over the evaluation's synthetic base (generator seed 7): chunk digest, conflicts."""
    import hashlib
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = synthetic_kb.generate(tmp, entries=entries, seed=seed, prefix="syn")
        data = demo_pins(pathlib.Path(root))
    digest = hashlib.sha256(json.dumps(data["chunks"], sort_keys=True).encode()).hexdigest()
    return {"entries": data["entries"], "chunks": sum(map(len, data["chunks"].values())), "chunks_sha256": digest,
            "conflicts": [[c["key"], *c["entry_ids"]] for c in data["conflicts"]]}


def compute() -> dict:
    return {"demo": demo_pins(), "synthetic_601_seed7": synthetic_pins()}


def write(path: pathlib.Path = PINS) -> dict:
    data = compute()
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    return data
