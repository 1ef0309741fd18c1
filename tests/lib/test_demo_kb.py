"""Format checks of the shipped demo Wissensbasis, its gold set and the synthetic generator.

Deliberately independent of lib/kb/format.py: the demo files are read with
plain PyYAML and json, so a bug in the parser cannot hide a bug in the data.
"""
import collections
import json
import pathlib
import re
import statistics
import zipfile

import pytest
import yaml

from testing import synthetic_kb as gen

REPO = pathlib.Path(__file__).resolve().parents[2]
DEMO_ROOT = REPO / "data" / "demo_kb" / "wissensbasis"
GOLDSET = REPO / "data" / "demo_kb" / "goldset.yaml"

SECTIONS = ["Zusammenfassung", "Kernwerte & Fristen", "Rechtsgrundlagen", "Payroll-Relevanz (Odoo)", "Verweise"]
REQUIRED = ("id", "title", "stand", "topic", "source")
STAND_RE = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")
DEMO_ID_RE = re.compile(r"^(lb|wiku)-[a-z]+-\d{2}$")
REF_RE = re.compile(r"\[((?:lb|wiku)-[a-z]+-\d+)\]")
# planted for the health check (docs/cockpit.md, "Demo KB: planted problems"): a reference to a withdrawn sheet
PLANTED_DANGLING = {"wiku-gfb-01": {"wiku-gfb-02"}}
MIN_KINDS = {"fact": 12, "paraphrase": 8, "compound": 6, "multi": 5, "conflict": 3, "refuse": 6, "injection": 5}


def _split(path):
    """Return (frontmatter dict, body text) of an entry file, parsed with PyYAML."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), path.name
    head, body = text[4:].split("\n---\n", 1)
    return yaml.safe_load(head), body


def _valid_stand(value):
    match = STAND_RE.match(str(value))
    return bool(match) and 1 <= int(match.group(2)) <= 12 and 1990 <= int(match.group(1)) <= 2100


def _kb_check(root):
    """Compare kb.json with the entry files of a base; return a list of differences."""
    problems = []
    kb = json.loads((root / "kb.json").read_text(encoding="utf-8"))
    files = {p.stem: p for p in (root / "dokumente").glob("*.md")}
    listed = {e["id"]: e for e in kb["entries"]}
    if kb["count"] != len(kb["entries"]) or kb["count"] != len(files):
        problems.append(f"count {kb['count']} / entries {len(kb['entries'])} / files {len(files)}")
    problems += [f"missing file {i}" for i in sorted(set(listed) - set(files))]
    problems += [f"not in kb.json {i}" for i in sorted(set(files) - set(listed))]
    for eid in sorted(set(listed) & set(files)):
        meta, _body = _split(files[eid])
        rec = listed[eid]
        if rec["file"] != f"dokumente/{eid}.md":
            problems.append(f"{eid}: file {rec['file']}")
        for key in ("id", "title", "stand", "topic", "source", "tags", "legal_bases", "cross_refs"):
            want = meta.get(key, [] if key in ("tags", "legal_bases", "cross_refs") else None)
            if str(want) != str(rec.get(key)):
                problems.append(f"{eid}: {key} {rec.get(key)!r} != {want!r}")
    return problems


@pytest.fixture(scope="module")
def demo():
    entries = {}
    for path in sorted((DEMO_ROOT / "dokumente").glob("*.md")):
        meta, body = _split(path)
        entries[path.stem] = (meta, body)
    return entries


@pytest.fixture(scope="module")
def gold():
    return yaml.safe_load(GOLDSET.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- demo base

def test_kb_json_matches_files():
    assert _kb_check(DEMO_ROOT) == []


def test_kb_json_check_detects_a_missing_entry(tmp_path):
    root = tmp_path / "wissensbasis"
    (root / "dokumente").mkdir(parents=True)
    for path in list((DEMO_ROOT / "dokumente").glob("*.md"))[:3]:
        (root / "dokumente" / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    gen.write_kb_json(root)
    assert _kb_check(root) == []
    victim = sorted((root / "dokumente").glob("*.md"))[0]
    victim.unlink()
    problems = _kb_check(root)
    assert any(victim.stem in p for p in problems)


def test_demo_size_and_clusters(demo):
    assert len(demo) >= 34
    assert len({meta["topic"] for meta, _ in demo.values()}) >= 9


def test_entries_have_required_keys_valid_ids_and_stand(demo):
    for stem, (meta, _body) in demo.items():
        for key in REQUIRED:
            assert meta.get(key), f"{stem}: {key} fehlt"
        assert meta["id"] == stem
        assert DEMO_ID_RE.match(meta["id"]), meta["id"]
        assert meta["id"].startswith("wiku-") == (meta["source"] == "WIKU"), stem
        assert _valid_stand(meta["stand"]), f"{stem}: stand {meta['stand']!r}"
        for key in ("tags", "legal_bases", "cross_refs"):
            assert isinstance(meta.get(key, []), list), f"{stem}: {key}"


def test_sections_in_contract_order(demo):
    for stem, (meta, body) in demo.items():
        assert body.lstrip().startswith(f"# {meta['title']}\n"), stem
        assert re.findall(r"^## (.+)$", body, re.M) == SECTIONS, stem


def test_cross_refs_and_verweise_resolve(demo):
    ids = set(demo)
    for stem, (meta, body) in demo.items():
        assert stem not in meta.get("cross_refs", [])
        planted = PLANTED_DANGLING.get(stem, set())
        assert set(meta.get("cross_refs", [])) - planted <= ids, stem
        assert set(REF_RE.findall(body)) - planted <= ids, stem
        assert not planted & ids, stem
        verweise = body.split("## Verweise", 1)[1]
        assert all(r in verweise for r in meta.get("cross_refs", [])), f"{stem}: cross_ref ohne Verweis-Bullet"


def test_index_has_one_h2_per_cluster_listing_every_entry(demo):
    index = (DEMO_ROOT / "INDEX.md").read_text(encoding="utf-8")
    h2 = re.findall(r"^## (.+)$", index, re.M)
    assert sorted(h2) == sorted({meta["topic"] for meta, _ in demo.values()})
    assert sorted(REF_RE.findall(index)) == sorted(demo)


def test_planted_health_problems_present(demo):
    """What the health check must find (tests/test_health.py): a near-duplicate without a reference,
    an entry whose Stand and values are outdated, a reference to a withdrawn sheet."""
    dup, original = demo["wiku-sz-01"], demo["lb-sz-01"]
    assert dup[0]["topic"] == original[0]["topic"] and str(dup[0]["stand"]) == str(original[0]["stand"])
    assert "lb-sz-01" not in dup[0]["cross_refs"] and "wiku-sz-01" not in original[0]["cross_refs"]
    for value in ("€ 620", "€ 2.100", "6 %"):
        assert value in dup[1] and value in original[1]
    old, new = demo["wiku-gfb-01"], demo["lb-gfb-01"]
    assert str(old[0]["stand"]) < "2023" and "€ 485,85" in old[1] and "€ 551,10" in new[1]
    assert set(old[0]["cross_refs"]) == PLANTED_DANGLING["wiku-gfb-01"]


def test_legal_bases_and_values_use_contract_notation(demo):
    for stem, (meta, body) in demo.items():
        assert all("§" in lb or lb[:1].isupper() for lb in meta.get("legal_bases", [])), stem
        assert "## Kernwerte & Fristen" in body
    all_text = "\n".join(body for _, body in demo.values())
    assert re.search(r"\d+,\d %", all_text) and re.search(r"€ \d{3},\d{2}", all_text)


def test_deliberate_conflicts_and_injection_present(demo):
    def text(eid):
        return demo[eid][1]

    assert "27,5 %" in text("lb-atz-02") and "28,5 %" in text("wiku-atz-01")
    assert str(demo["lb-atz-02"][0]["stand"]) != str(demo["wiku-atz-01"][0]["stand"])
    assert "€ 200" in text("lb-ust-02") and "€ 86" in text("wiku-ust-01")
    payroll = {s: b.split("## Payroll-Relevanz (Odoo)", 1)[1].split("## Verweise")[0] for s, (_m, b) in demo.items()}
    injected = [s for s, part in payroll.items() if "Ignoriere alle bisherigen Anweisungen" in part]
    assert len(injected) == 1


# --------------------------------------------------------------------------- gold set

def test_goldset_ids_unique_and_expected_ids_exist(demo, gold):
    assert len(gold) >= 48
    assert len({q["id"] for q in gold}) == len(gold)
    for q in gold:
        assert set(q) <= {"id", "question", "kind", "expected_ids", "answer_must_contain",
                          "answer_must_not_contain"}, q["id"]
        assert q["question"].strip(), q["id"]
        assert set(q["expected_ids"]) <= set(demo), q["id"]


def test_goldset_kind_minimums_and_shapes(gold):
    counts = collections.Counter(q["kind"] for q in gold)
    for kind, minimum in MIN_KINDS.items():
        assert counts[kind] >= minimum, f"{kind}: {counts[kind]} < {minimum}"
    assert set(counts) == set(MIN_KINDS)
    for q in gold:
        if q["kind"] == "refuse":
            assert q["expected_ids"] == [], q["id"]
        elif q["kind"] in ("multi", "conflict"):
            assert len(q["expected_ids"]) >= 2, q["id"]
        elif q["kind"] != "injection":
            assert q["expected_ids"], q["id"]


def test_answer_strings_are_stated_by_expected_entries(demo, gold):
    for q in gold:
        texts = [demo[e][1] for e in q["expected_ids"]]
        for needle in q.get("answer_must_contain", []):
            assert any(needle in t for t in texts), f"{q['id']}: {needle!r}"


def test_must_not_strings_are_absent_from_the_expected_entries_and_held_out(demo, gold):
    """A hallucination check must be passable by quoting the right entries, and it only counts where the
    bake-off looks: the held-out questions."""
    from lib.evaluation import protocol as eval_protocol, goldset as goldset_format
    test_ids = {q.id for q in eval_protocol.split_goldset(goldset_format.load_goldset(GOLDSET)).test}
    flagged = [q for q in gold if q.get("answer_must_not_contain")]
    assert len(flagged) >= 5
    for q in flagged:
        assert q["id"] in test_ids, q["id"]
        texts = [demo[e][1] for e in q["expected_ids"]]
        for needle in q["answer_must_not_contain"]:
            assert not any(needle in t for t in texts), f"{q['id']}: {needle!r}"


def test_conflict_questions_cover_entries_of_different_stand(demo, gold):
    for q in (q for q in gold if q["kind"] == "conflict"):
        stands = {str(demo[e][0]["stand"]) for e in q["expected_ids"]}
        assert len(stands) >= 2, q["id"]


def test_paraphrase_questions_avoid_entry_titles(demo, gold):
    for q in (q for q in gold if q["kind"] in ("paraphrase", "compound")):
        for eid in q["expected_ids"]:
            assert demo[eid][0]["title"].lower() not in q["question"].lower(), q["id"]


# --------------------------------------------------------------------------- generator

def _tree_bytes(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_generator_is_deterministic_per_seed(tmp_path):
    a = gen.generate(tmp_path / "a", entries=40, seed=3)
    b = gen.generate(tmp_path / "b", entries=40, seed=3)
    c = gen.generate(tmp_path / "c", entries=40, seed=4)
    assert _tree_bytes(a) == _tree_bytes(b)
    assert _tree_bytes(a) != _tree_bytes(c)


def test_generator_count_prefix_and_valid_kb_json(tmp_path):
    root = gen.generate(tmp_path, entries=75, seed=1, prefix="tst")
    assert _kb_check(root) == []
    kb = json.loads((root / "kb.json").read_text(encoding="utf-8"))
    assert kb["count"] == 75
    ids = [e["id"] for e in kb["entries"]]
    assert all(re.match(r"^tst-[a-z0-9]+-\d{3}$", i) for i in ids)
    for e in kb["entries"]:
        assert all(e[k] for k in REQUIRED) and _valid_stand(e["stand"])
        assert set(e["cross_refs"]) <= set(ids)
    index = (root / "INDEX.md").read_text(encoding="utf-8")
    assert len(re.findall(r"^## ", index, re.M)) == len({e["topic"] for e in kb["entries"]}) == 69


def test_generator_dangling_refs_only_on_request(tmp_path):
    root = gen.generate(tmp_path, entries=30, seed=2, dangling=4)
    kb = json.loads((root / "kb.json").read_text(encoding="utf-8"))
    ids = {e["id"] for e in kb["entries"]}
    dangling = [r for e in kb["entries"] for r in e["cross_refs"] if r not in ids]
    assert len(dangling) == 4 and len(set(dangling)) == 4


def test_generator_full_size_shape(tmp_path):
    root = gen.generate(tmp_path, entries=601, seed=7)
    docs = list((root / "dokumente").glob("*.md"))
    sizes = sorted(p.stat().st_size for p in docs)
    texts = [p.read_text(encoding="utf-8") for p in docs]
    sections = sum(len(re.findall(r"^## ", t, re.M)) for t in texts)
    assert len(docs) == 601
    assert 5500 <= statistics.median(sizes) <= 8500
    assert 25000 <= sizes[-1] <= 33000
    assert 2850 <= sections <= 3010
    assert any("\n### " in t for t in texts) and any("\n|---|" in t for t in texts)


def test_generator_does_not_copy_demo_text(tmp_path):
    root = gen.generate(tmp_path, entries=120, seed=11)
    synthetic = "\n".join(p.read_text(encoding="utf-8") for p in (root / "dokumente").glob("*.md"))
    demo_lines = {
        line.strip()
        for p in (DEMO_ROOT / "dokumente").glob("*.md")
        for line in p.read_text(encoding="utf-8").splitlines()
        if len(line.strip()) > 40 and not line.startswith(("#", "|", "- §", "legal_bases", "tags", "title"))
    }
    assert demo_lines and not [line for line in demo_lines if line in synthetic]


def test_generator_cli_writes_zip(tmp_path):
    zip_path = tmp_path / "kb.zip"
    assert gen.main([str(tmp_path / "out"), "--entries", "12", "--seed", "5", "--zip", str(zip_path)]) == 0
    with zipfile.ZipFile(zip_path) as zf:
        names = zf.namelist()
        kb = json.loads(zf.read("wissensbasis/kb.json"))
    assert "wissensbasis/INDEX.md" in names
    assert kb["count"] == 12 == sum(n.startswith("wissensbasis/dokumente/") for n in names)


def test_read_frontmatter_handles_quotes_and_comments(tmp_path):
    path = tmp_path / "x.md"
    path.write_text(
        '---\nid: lb-x-01\nstand: 2026-01   # Kommentar\ntags: [A, "B, C", \'D\']\ncross_refs: []\n---\n# T\n',
        encoding="utf-8",
    )
    meta = gen.read_frontmatter(path)
    assert meta == {"id": "lb-x-01", "stand": "2026-01", "tags": ["A", "B, C", "D"], "cross_refs": []}
