"""Health check findings from plain data (lib/cockpit/health.py)."""
import datetime as dt

from lib.cockpit import health
from lib.answer.conflicts import detect_conflicts
from lib.kb.entry_facts import EntryFacts

TODAY = dt.date(2026, 12, 1)
KERN_A = "| Wert | Betrag |\n|---|---|\n| Kilometergeld Pkw | € 0,50 |"
KERN_B = "| Wert | Betrag |\n|---|---|\n| Kilometergeld Pkw | € 0,42 |"


detect = detect_conflicts


def E(entry_id, **kw):
    kw.setdefault("topic", "reisekosten")
    kw.setdefault("stand", "2025-01")
    return EntryFacts(entry_id, **kw)


def kinds(findings):
    return sorted((f.kind, tuple(f.entry_ids)) for f in findings)


def test_conflict_and_the_older_side_is_stale():
    entries = [E("a-rk-01", kernwerte_text=KERN_A, stand="2025-01"), E("a-rk-02", kernwerte_text=KERN_B, stand="2023-05"),
               E("a-rk-03", kernwerte_text=KERN_A, stand="2024-01")]
    found = health.run_checks(entries, detect=detect, options=health.Options(max_age_months=0, today=TODAY))
    conflict = [f for f in found if f.kind == "conflict"]
    assert len(conflict) == 1 and set(conflict[0].entry_ids) == {"a-rk-01", "a-rk-02", "a-rk-03"}
    assert "€ 0,42" in conflict[0].message and conflict[0].severity == "high"
    stale = [f for f in found if f.kind == "stale"]
    # a-rk-03 (2024-01) states the current value: only a-rk-02's value differs from the newest
    assert [f.entry_ids for f in stale] == [["a-rk-02"]]
    assert "[a-rk-01]" in stale[0].message and stale[0].severity == "medium"


def test_same_values_give_no_conflict_and_no_stale():
    entries = [E("a-rk-01", kernwerte_text=KERN_A), E("a-rk-02", kernwerte_text=KERN_A, stand="2024-01")]
    assert health.run_checks(entries, detect=detect, options=health.Options(max_age_months=0, today=TODAY)) == []


def test_stale_by_age_only_past_the_limit():
    entries = [E("a-x-01", stand="2023-06"), E("a-x-02", stand="2024-01"), E("a-x-03", stand="2026-11-15")]
    found = health.stale_findings(entries, [], health.Options(max_age_months=36, today=TODAY))
    assert [f.entry_ids for f in found] == [["a-x-01"]]
    assert "42 Monate" in found[0].message and found[0].severity == "low"
    assert health.stale_findings(entries, [], health.Options(max_age_months=0, today=TODAY)) == []


def test_dangling_and_oneway_references():
    entries = [E("a-x-01", cross_refs=["a-x-02", "a-x-09"]), E("a-x-02", cross_refs=["a-x-01"]),
               E("a-x-03", cross_refs=["a-x-01"])]
    found = health.reference_findings(entries)
    assert kinds(found) == [("dangling_ref", ("a-x-01",)), ("oneway_ref", ("a-x-03", "a-x-01"))]
    assert "a-x-09" in found[0].message
    # an id known elsewhere (e.g. archived entries counted in) is not dangling
    assert kinds(health.reference_findings(entries, {"a-x-01", "a-x-02", "a-x-03", "a-x-09"})) == [
        ("oneway_ref", ("a-x-03", "a-x-01"))]


def test_near_duplicates_need_the_threshold_and_no_reference():
    entries = [E("a-x-01"), E("a-x-02"), E("a-x-03", cross_refs=["a-x-01"])]
    pairs = [("a-x-02", "a-x-01", 0.97), ("a-x-01", "a-x-02", 0.96), ("a-x-01", "a-x-03", 0.99),
             ("a-x-02", "a-x-03", 0.90), ("a-x-01", "gone", 0.99)]
    found = health.near_duplicate_findings(entries, pairs, health.Options(near_duplicate_threshold=0.95))
    assert kinds(found) == [("near_duplicate", ("a-x-01", "a-x-02"))]
    assert "0.970" in found[0].message and found[0].key == "near_duplicate:a-x-01:a-x-02"


def test_a_contradicting_pair_is_a_conflict_not_a_duplicate():
    entries = [E("a-rk-01", kernwerte_text=KERN_A), E("a-rk-02", kernwerte_text=KERN_B, stand="2023-05")]
    found = health.run_checks(entries, detect=detect, duplicate_pairs=[("a-rk-01", "a-rk-02", 0.99)],
                              options=health.Options(max_age_months=0, today=TODAY))
    assert sorted({f.kind for f in found}) == ["conflict", "stale"]


def test_embedding_findings():
    infos = [health.EmbeddingInfo("a", 3, 0), health.EmbeddingInfo("b", 3, 3),
             health.EmbeddingInfo("c", 3, 2, failed=["Kernwerte"], cut=["Zusammenfassung"])]
    found = health.embedding_findings(infos)
    assert [(f.key, f.severity) for f in found] == [("embedding:none:a", "high"), ("embedding:failed:c", "medium"),
                                                   ("embedding:cut:c", "low")]


def test_unretrieved_waits_for_a_log():
    entries = [E("a-x-01"), E("a-x-02")]
    options = health.Options(unretrieved_min_questions=10)
    assert health.unretrieved_findings(entries, {"a-x-01"}, 9, 30, options) == []
    found = health.unretrieved_findings(entries, {"a-x-01"}, 10, 30, options)
    assert [f.entry_ids for f in found] == [["a-x-02"]] and "30 Tagen" in found[0].message


def test_keys_are_stable_and_findings_sorted_by_severity():
    entries = [E("a-rk-01", kernwerte_text=KERN_A, cross_refs=["zz-9"]), E("a-rk-02", kernwerte_text=KERN_B,
                                                                          stand="2023-05")]
    first = health.run_checks(entries, detect=detect, options=health.Options(today=TODAY))
    again = health.run_checks(list(reversed(entries)), detect=detect, options=health.Options(today=TODAY))
    assert [f.key for f in first] == [f.key for f in again]
    ranks = [health.SEVERITY_RANK[f.severity] for f in first]
    assert ranks == sorted(ranks) and first[0].kind == "conflict"


def test_reconcile():
    delta = health.reconcile(["a", "b", "c"], ["b", "d", "b"])
    assert (delta.opened, delta.updated, delta.resolved) == (["d"], ["b"], ["a", "c"])


def test_a_finding_over_many_entries_keeps_a_bounded_unique_key():
    ids = [f"syn-abc-{n:04d}" for n in range(800)]
    long_key = f"conflict:{','.join(ids)}:beitragssatz"
    one = health.Finding("conflict", "high", ids, long_key, "m")
    other = health.Finding("conflict", "high", ids, long_key.replace("beitragssatz", "grenze"), "m")
    assert len(one.key) == health.MAX_KEY_CHARS and one.key.startswith("conflict:syn-abc-0000,")
    assert one.key != other.key     # same head, another digest
    assert health.Finding("conflict", "high", ids, long_key, "m").key == one.key     # stable across runs
    assert health.Finding("stale", "low", ["a"], "stale:a", "m").key == "stale:a"


def test_near_duplicates_beside_a_conflict_of_thousands_of_sides_stay_cheap():
    from lib.answer.types import Conflict
    ids = [f"syn-x-{n:05d}" for n in range(20000)]
    entries = [E(i) for i in ids] + [E("lb-a-01"), E("lb-a-02")]
    huge = Conflict("beitragssatz", ids, {i: "1 %" for i in ids}, {i: "2025-01" for i in ids})
    pairs = [(ids[0], ids[1], 0.99), ("lb-a-01", "lb-a-02", 0.99)]
    found = health.near_duplicate_findings(entries, pairs, health.Options(near_duplicate_threshold=0.95), [huge])
    # the two sides of the conflict are no duplicate; the unrelated pair is
    assert kinds(found) == [("near_duplicate", ("lb-a-01", "lb-a-02"))]


def test_the_kinds_table_feeds_the_documentation_and_the_translations():
    import pathlib

    import polib

    repo = pathlib.Path(__file__).resolve().parents[2]
    doc = (repo / "docs" / "cockpit.md").read_text(encoding="utf-8")
    po = {e.msgid for e in polib.pofile(str(repo / "i18n" / "de.po")) if e.msgstr and not e.obsolete}
    for kind in health.FINDING_KINDS:
        assert f"(`{kind.key}`)" in doc, f"docs/cockpit.md has no line for {kind.key}"
        assert kind.label in po, f"no German label for {kind.label}"
    assert health.KINDS == tuple(k.key for k in health.FINDING_KINDS)
