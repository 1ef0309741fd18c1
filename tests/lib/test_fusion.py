"""Tests for lib.search.fusion: RRF, score-aware fusion, aggregation to entries, cross refs."""
from datetime import date

import pytest

from lib.search.fusion import ChunkHit, EntryResult, convex, expand_cross_refs, fuse, ranked, rrf


def hit(chunk_id, entry_id, rank, score=0.0, section="zusammenfassung"):
    return ChunkHit(chunk_id, entry_id, section, rank, score)


def test_rrf_sums_reciprocal_ranks_over_signals():
    lists = {
        "dense": [hit(1, "a", 1), hit(2, "b", 2)],
        "fts": [hit(2, "b", 1), hit(3, "c", 2)],
    }
    scores = rrf(lists, k=60)
    assert scores[1] == pytest.approx(1 / 61)
    assert scores[2] == pytest.approx(1 / 62 + 1 / 61)
    assert scores[3] == pytest.approx(1 / 62)


def test_rrf_weights_and_missing_weight_default_to_one():
    lists = {"dense": [hit(1, "a", 1)], "fts": [hit(1, "a", 2)], "title": [hit(1, "a", 1)]}
    scores = rrf(lists, k=10, weights={"dense": 2.0, "fts": 0.5})
    assert scores[1] == pytest.approx(2.0 / 11 + 0.5 / 12 + 1.0 / 11)


def test_rrf_counts_a_chunk_once_per_signal_at_its_best_rank_and_respects_depth():
    lists = {"fts": [hit(7, "a", 1), hit(8, "b", 2), hit(7, "a", 3), hit(9, "c", 4)]}
    scores = rrf(lists, k=0, depth=2)
    assert scores == {7: pytest.approx(1.0), 8: pytest.approx(0.5)}


def test_rrf_rejects_bad_input():
    with pytest.raises(ValueError):
        rrf({"fts": [hit(1, "a", 0)]})
    with pytest.raises(ValueError):
        rrf({"fts": [hit(1, "a", 1)]}, weights={"fts": -1})
    with pytest.raises(ValueError):
        rrf({"fts": [hit(1, "a", 1)]}, k=-5)


def test_convex_normalises_each_list_then_weights():
    lists = {
        "dense": [hit(1, "a", 1, 0.9), hit(2, "b", 2, 0.7), hit(3, "c", 3, 0.5)],
        "fts": [hit(3, "c", 1, 10.0), hit(1, "a", 2, 2.0)],
    }
    scores = convex(lists, weights={"dense": 0.7, "fts": 0.3})
    assert scores[1] == pytest.approx(0.7 * 1.0 + 0.3 * 0.0)
    assert scores[2] == pytest.approx(0.7 * 0.5)
    assert scores[3] == pytest.approx(0.7 * 0.0 + 0.3 * 1.0)
    # All scores equal within a list: every hit counts fully.
    assert convex({"fts": [hit(1, "a", 1, 3.0), hit(2, "b", 2, 3.0)]}) == {1: 1.0, 2: 1.0}


def test_fuse_aggregates_chunks_to_entries_with_decayed_bonus():
    lists = {
        "dense": [hit(1, "a", 1), hit(2, "b", 2), hit(3, "a", 3)],
        "fts": [hit(4, "c", 1), hit(1, "a", 2)],
    }
    results = fuse(lists, k=60, chunk_decay=0.2, top_n=None)
    by_id = {r.entry_id: r for r in results}
    best_a, second_a = 1 / 61 + 1 / 62, 1 / 63
    assert by_id["a"].score == pytest.approx(best_a + 0.2 * second_a)
    assert by_id["a"].chunk_ids == [1, 3]
    assert by_id["a"].signals == {"dense": 1, "fts": 2}
    assert by_id["b"].score == pytest.approx(1 / 62)
    assert by_id["c"].signals == {"fts": 1}
    assert [r.entry_id for r in results] == ["a", "c", "b"]


def test_fuse_best_chunk_dominates():
    # Entry "many" has three weak chunks, entry "one" a single strong one.
    lists = {"dense": [hit(1, "one", 1), hit(2, "many", 2), hit(3, "many", 3), hit(4, "many", 4)]}
    results = fuse(lists, k=0, chunk_decay=0.2)
    assert [r.entry_id for r in results] == ["one", "many"]
    assert results[1].score == pytest.approx(1 / 2 + 0.2 / 3 + 0.04 / 4)


def test_fuse_works_with_one_signal_missing_or_empty():
    fts_only = {"fts": [hit(1, "a", 1), hit(2, "b", 2)]}
    for lists in (fts_only, {**fts_only, "dense": []}, {**fts_only, "dense": None}):
        results = fuse(lists)
        assert [r.entry_id for r in results] == ["a", "b"]
        assert all(set(r.signals) == {"fts"} for r in results)
    assert fuse({}) == [] and fuse({"dense": [], "fts": []}) == []


def test_fuse_stand_breaks_ties_only():
    symmetric = {"dense": [hit(1, "old", 1), hit(2, "new", 2)], "fts": [hit(2, "new", 1), hit(1, "old", 2)]}
    stands = {"old": date(2024, 1, 1), "new": date(2025, 1, 1)}
    assert [r.entry_id for r in fuse(symmetric, stand_dates=stands)] == ["new", "old"]
    # Without stands the entry id decides, so the order is still fixed.
    assert [r.entry_id for r in fuse(symmetric)] == ["new", "old"]
    assert [r.entry_id for r in fuse(symmetric, stand_dates={"old": date(2025, 6, 1)})] == ["old", "new"]
    # A better score beats a newer stand.
    clear = {"dense": [hit(1, "old", 1), hit(2, "new", 2)]}
    assert [r.entry_id for r in fuse(clear, stand_dates=stands)] == ["old", "new"]


def test_fuse_kernwerte_boost_for_value_questions():
    lists = {"dense": [hit(1, "prose", 1, section="zusammenfassung"), hit(2, "table", 2, section="kernwerte")]}
    assert [r.entry_id for r in fuse(lists, k=60)] == ["prose", "table"]
    boosted = fuse(lists, k=60, prefer_kernwerte=True, kernwerte_boost=1.25)
    assert [r.entry_id for r in boosted] == ["table", "prose"]
    assert boosted[0].score == pytest.approx(1.25 / 62)
    assert boosted[0].best_section == "kernwerte"


def test_fuse_top_n_and_method_choice():
    lists = {"dense": [hit(i, f"e{i}", i, 1.0 / i) for i in range(1, 12)]}
    assert len(fuse(lists)) == 8
    assert len(fuse(lists, top_n=3)) == 3
    assert len(fuse(lists, top_n=None)) == 11
    assert [r.entry_id for r in fuse(lists, method="convex", top_n=2)] == ["e1", "e2"]
    with pytest.raises(ValueError):
        fuse(lists, method="magic")


def test_fuse_dense_weight_keeps_a_strong_dense_hit_on_top():
    # Dense puts "right" first; a noisy full-text list puts it fourth.
    lists = {
        "dense": [hit(1, "right", 1), hit(2, "x", 2), hit(3, "y", 3)],
        "fts": [hit(2, "x", 1), hit(3, "y", 2), hit(4, "z", 3), hit(1, "right", 4)],
    }
    assert fuse(lists, k=60)[0].entry_id == "x"
    assert fuse(lists, k=60, weights={"dense": 1.0, "fts": 0.3})[0].entry_id == "right"


def test_ranked_assigns_ranks_in_order():
    hits = ranked([(5, "a", "kernwerte", 0.9), (6, "b", "verweise", 0.4)])
    assert [(h.chunk_id, h.rank, h.section_key) for h in hits] == [(5, 1, "kernwerte"), (6, 2, "verweise")]


def _result(entry_id):
    return EntryResult(entry_id, 1.0, [1], "zusammenfassung", {"dense": 1})


def test_expand_cross_refs_appends_marked_entries_in_order():
    results = [_result("a"), _result("b"), _result("c"), _result("d")]
    refs = {"a": ["b", "x", "y"], "b": ["z", "q"], "d": ["never"]}
    expanded = expand_cross_refs(results, refs, from_top=3, max_added=3)
    assert [r.entry_id for r in expanded] == ["a", "b", "c", "d", "x", "y", "z"]
    added = expanded[4:]
    assert all(r.expansion and r.score == 0.0 and r.chunk_ids == [] for r in added)
    assert [r.via for r in added] == ["a", "a", "b"]
    assert len(results) == 4  # input unchanged


def test_expand_cross_refs_limits_and_known_filter():
    results = [_result("a"), _result("b")]
    refs = {"a": ["x", "gone", "y"], "b": ["z"]}
    assert [r.entry_id for r in expand_cross_refs(results, refs, max_added=1)][2:] == ["x"]
    assert [r.entry_id for r in expand_cross_refs(results, refs, known={"x", "y", "z"})][2:] == ["x", "y", "z"]
    assert [r.entry_id for r in expand_cross_refs(results, refs, from_top=1)][2:] == ["x", "gone", "y"]
    assert expand_cross_refs(results, {}, max_added=3) == results


# --------------------------------------------------------------------------- entry-level lists, rescue, recipes

from lib.search.fusion import Recipe, rank_entries, rescue


def test_entry_level_lists_add_to_the_entry_but_never_become_its_chunks():
    lists = {"dense": [hit(1, "a", 1), hit(2, "b", 2)]}
    cards = {"card": [hit(90, "b", 1, section="card"), hit(91, "c", 2, section="card")]}
    plain = fuse(lists, k=10, top_n=None)
    assert [r.entry_id for r in plain] == ["a", "b"]
    both = fuse(lists, k=10, top_n=None, entry_lists=cards, weights={"dense": 1.0, "card": 1.0})
    by_id = {r.entry_id: r for r in both}
    assert [r.entry_id for r in both] == ["b", "a", "c"]          # b: 1/12 + 1/11 > a: 1/11
    assert by_id["b"].score == pytest.approx(1 / 12 + 1 / 11)
    assert by_id["b"].chunk_ids == [2] and by_id["b"].signals == {"card": 1, "dense": 2}
    # an entry only the cards found: ranked, without chunks of its own
    assert by_id["c"].chunk_ids == [] and by_id["c"].best_section == "" and by_id["c"].signals == {"card": 2}
    # weight 0 switches the card list off
    zero = fuse(lists, k=10, top_n=None, entry_lists=cards, weights={"dense": 1.0, "card": 0.0})
    assert [r.entry_id for r in zero][:2] == ["a", "b"]


def test_entry_level_lists_in_the_convex_combination():
    lists = {"dense": [hit(1, "a", 1, 0.9), hit(2, "b", 2, 0.8)]}
    cards = {"card": [hit(90, "b", 1, 0.95, "card"), hit(91, "a", 2, 0.7, "card")]}
    res = fuse(lists, method="convex", weights={"dense": 1.0, "card": 0.5}, entry_lists=cards, top_n=None)
    scores = {r.entry_id: r.score for r in res}
    assert scores == {"a": pytest.approx(1.0 + 0.0), "b": pytest.approx(0.0 + 0.5)}


def er(entry_id):
    return EntryResult(entry_id, 1.0, [1], "zusammenfassung")


def test_rescue_adds_only_what_the_ranking_side_missed_below_its_top():
    dense = [er(x) for x in "abcdefghij"]
    fts = [er(x) for x in ["c", "x", "a", "y", "z"]]
    out = [r.entry_id for r in rescue(dense, fts, keep_top=3, add=2, top_n=8)]
    assert out == ["a", "b", "c", "x", "y", "d", "e", "f"]
    # nothing missed: dense unchanged
    assert [r.entry_id for r in rescue(dense, [er("b"), er("a")], keep_top=2, add=2)] == list("abcdefgh")
    # only the first add + keep_top of the rescuing side are looked at
    assert [r.entry_id for r in rescue(dense[:3], [er(x) for x in "abcq"], keep_top=1, add=1, top_n=None)] == \
        ["a", "b", "c"]
    assert [r.entry_id for r in rescue([], [er("q")], keep_top=3, add=2)] == ["q"]


def test_rank_entries_applies_a_recipe_per_question_type():
    lists = {"dense": [hit(1, "a", 1, 0.9), hit(2, "b", 2, 0.5)],
             "fts": [hit(3, "b", 1, 0.8), hit(4, "a", 2, 0.1)]}
    recipe = Recipe(method="convex", weights=(("dense", 1.0), ("fts", 0.2)),
                    value_weights=(("dense", 1.0), ("fts", 2.0)))
    assert [r.entry_id for r in rank_entries(lists, recipe)] == ["a", "b"]
    assert [r.entry_id for r in rank_entries(lists, recipe, value_question=True)] == ["b", "a"]


def test_rank_entries_rescue_and_its_fallback_without_the_ranking_side():
    lists = {"dense": [hit(n, e, n) for n, e in enumerate("abcdefghi", start=1)],
             "fts": [hit(50, "z", 1), hit(51, "a", 2)]}
    recipe = Recipe(method="rescue", weights=(("dense", 1.0),), rescue_keep=3, rescue_add=1)
    assert [r.entry_id for r in rank_entries(lists, recipe)] == ["a", "b", "c", "z", "d", "e", "f", "g"]
    # no embeddings: full text ranks alone
    assert [r.entry_id for r in rank_entries({"fts": lists["fts"]}, recipe)] == ["z", "a"]
    with pytest.raises(ValueError):
        rank_entries(lists, Recipe(method="magic"))
    assert "rescue=fts:3+1" in recipe.label() and "k=" in recipe.label()
