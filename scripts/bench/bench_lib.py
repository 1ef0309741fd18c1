"""Speed of the pure engine on the 601-entry synthetic base (no Odoo, no database).

    python scripts/bench/bench_lib.py
"""
import pathlib
import statistics
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from lib.kb import chunking, batch as kb_batch
from lib.search import compounds, fulltext
from testing import synthetic_kb  # noqa: E402


def timed(fn, repeat=3):
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        runs.append(time.perf_counter() - t0)
    return result, min(runs)


with tempfile.TemporaryDirectory() as tmp:
    root = synthetic_kb.generate(tmp, entries=601, seed=7)
    files = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}
size = sum(len(b) for b in files.values())
batch, t_parse = timed(lambda: kb_batch.load_batch(files))
chunks, t_chunk = timed(lambda: [c for e in batch.entries for c in chunking.chunk_entry(e)])
texts = [c.text for c in chunks]
lexicon, t_lex = timed(lambda: compounds.build_lexicon(texts))
_, t_index = timed(lambda: [compounds.index_text(t, lexicon) for t in texts], repeat=1)
synonyms = fulltext.parse_synonyms(fulltext.load_synonyms_csv(str(REPO / "data" / "pv.kb.synonym.csv")))
questions = ["Wie hoch ist der Urlaubszuschlag für Dienstnehmer mit Firmenauto nach § 67 EStG?",
             "Bis wann muss der Dienstgeberbeitrag zum FLAF bezahlt werden?",
             "Welche Pendlerpauschale gilt bei Teilzeit und Überstundenzuschlägen?"]
for q in questions:
    fulltext.build_query(q, lexicon, synonyms)
per_query = []
for _ in range(100):
    for q in questions:
        t0 = time.perf_counter()
        fulltext.build_query(q, lexicon, synonyms)
        per_query.append((time.perf_counter() - t0) * 1000)
print(f"601 entries, {size / 1e6:.1f} MB, {len(chunks)} chunks")
print(f"parse + validate: {t_parse:.2f} s   chunk: {t_chunk:.2f} s   lexicon: {t_lex:.2f} s   "
      f"index_text: {t_index:.2f} s   build_query: median {statistics.median(per_query):.3f} ms")
