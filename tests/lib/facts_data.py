"""Entries of the demo base and of the fact test bases as the fact extraction reads them, shared by the facts'
tests (tests/lib/test_facts*.py)."""
import pathlib

from lib.facts.concepts import abbreviations
from lib.facts.extract import Source
from lib.kb.format import parse_entry
from lib.search.fulltext import load_synonyms_csv

REPO = pathlib.Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo_kb" / "wissensbasis" / "dokumente"
BASE_A = REPO / "tests" / "data" / "facts_kb"
BASE_B = REPO / "tests" / "data" / "facts_kb_b"
SYNONYMS = load_synonyms_csv(str(REPO / "data" / "pv.kb.synonym.csv"))
ABBREV = abbreviations(SYNONYMS)


def sources(folder, pattern="*.md"):
    """The entries of ``folder`` matching ``pattern``, in file order."""
    out = []
    for path in sorted(pathlib.Path(folder).glob(pattern)):
        entry, issues = parse_entry(path.read_bytes(), path.name)
        assert entry, issues
        out.append(Source(entry.id, entry.title, entry.stand, entry.topic, entry.body, entry.tags, entry.legal_bases))
    return out
