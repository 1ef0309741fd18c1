"""Fact extraction, comparison and lookup speed (pure Python, no Odoo).

    scripts/bench/run.sh facts        (or: python scripts/bench/bench_facts.py)

Five runs each: extracting the facts of the demo base (43 entries) and of the 601-entry synthetic base plus
the demo base, comparing them (the health check's fact comparison), comparing them with near matches by
embedding (the vectors given at once, as the stored ones are: the stand-in's hash vectors, whose meaning does not
matter for the time), the coming year's coverage, and answering the value questions of the demo gold sets from
the facts (question parsing and lookup, as the agent does after retrieval).
"""
import datetime
import pathlib
import statistics
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from lib.evaluation.goldset import load_goldset  # noqa: E402
from lib.facts import coverage  # noqa: E402
from lib.facts.compare import compare  # noqa: E402
from lib.facts.concepts import abbreviations  # noqa: E402
from lib.facts.extract import Source, extract_all  # noqa: E402
from lib.facts.lookup import find, parse_question  # noqa: E402
from lib.kb.format import parse_entry  # noqa: E402
from lib.search.fulltext import load_synonyms_csv  # noqa: E402
from testing import synthetic_kb  # noqa: E402
from testing.standin.embedders import hash_embed  # noqa: E402

DEMO = REPO / "data" / "demo_kb" / "wissensbasis"


def sources(root):
    out = []
    for path in sorted((pathlib.Path(root) / "dokumente").glob("*.md")):
        entry, _ = parse_entry(path.read_bytes(), path.name)
        if entry:
            out.append(Source(entry.id, entry.title, entry.stand, entry.topic, entry.body, entry.tags,
                              entry.legal_bases))
    return out


def timed(fn, runs=5):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return result, times


def main():
    synonyms = load_synonyms_csv(str(REPO / "data" / "pv.kb.synonym.csv"))
    abbrev = abbreviations(synonyms)
    demo = sources(DEMO)
    with tempfile.TemporaryDirectory() as tmp:
        big = sources(synthetic_kb.generate(tmp, entries=601, seed=7, prefix="syn")) + demo
    for name, base in (("demo (43 entries)", demo), ("601 synthetic + demo", big)):
        facts, t_extract = timed(lambda: extract_all(base, abbrev))
        pairs, t_compare = timed(lambda: compare(facts))
        vectors = {}

        def embed(texts):
            for text in texts:
                if text not in vectors:
                    vectors[text] = hash_embed(text, 384)
            return [vectors[t] for t in texts]

        near, t_near = timed(lambda: compare(facts, embed=embed))
        _, t_cover = timed(lambda: coverage.missing_next_year(facts, datetime.date(2026, 12, 1)), runs=3)
        print(f"{name}: {len(facts)} facts; extract median {statistics.median(t_extract):.0f} ms "
              f"(min {min(t_extract):.0f}, max {max(t_extract):.0f}); compare median "
              f"{statistics.median(t_compare):.0f} ms, {len(pairs)} pairs; with near matches "
              f"{statistics.median(t_near):.0f} ms ({len(vectors)} concept texts); coming year's coverage "
              f"{statistics.median(t_cover):.0f} ms")
    facts = extract_all(demo, abbrev)
    questions = []
    for name in ("goldset.yaml", "goldset_abstimmung.yaml", "goldset_praxis.yaml"):
        questions += [q.question for q in load_goldset(REPO / "data" / "demo_kb" / name)]
    times, answered = [], 0
    for question in questions:
        t0 = time.perf_counter()
        parsed = parse_question(question, synonyms)
        match = find(parsed, facts) if parsed else None
        times.append((time.perf_counter() - t0) * 1000)
        answered += match is not None
    times.sort()
    print(f"lookup over {len(questions)} gold questions ({answered} with a fact match): median "
          f"{statistics.median(times):.1f} ms, p95 {times[int(0.95 * len(times)) - 1]:.1f} ms, max {times[-1]:.1f} ms")


if __name__ == "__main__":
    main()
