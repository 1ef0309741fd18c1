"""Tests for lib.search.ranking: the retriever's constants fit together, and each says how it was chosen."""
import ast
import pathlib

from lib.search import ranking

SOURCE = pathlib.Path(ranking.__file__).read_text(encoding="utf-8")


def test_every_constant_has_a_comment_on_how_it_was_chosen():
    lines = SOURCE.splitlines()
    constants = [node for node in ast.parse(SOURCE).body if isinstance(node, ast.Assign)]
    assert len(constants) >= 10
    for node in constants:
        above = lines[node.lineno - 2].strip()
        assert above.startswith("#"), f"{ast.unparse(node.targets[0])} has no comment above it"


def test_the_recipe_reads_no_deeper_than_the_lists_deliver():
    assert ranking.RECIPE.depth is None or ranking.RECIPE.depth <= min(ranking.CANDIDATES, ranking.CARD_CANDIDATES)


def test_the_recipe_uses_the_default_of_the_rrf_k_setting():
    assert ranking.RECIPE.k == ranking.RRF_K == 10


def test_the_recipe_is_the_convex_combination_with_the_entry_cards():
    # chosen on the pooled tuning parts over the base with distractors (docs/retrieval.md, 2026-12-02); the
    # retriever fetches the card list because the recipe weights it (models/pv_kb_retriever._candidates)
    assert ranking.RECIPE.method == "convex"
    assert dict(ranking.RECIPE.weights) == {"dense": 1.0, "fts": 1.5, "card": 0.5}
    assert dict(ranking.RECIPE.value_weights) == {"dense": 1.0, "fts": 1.0, "card": 0.5}


def test_a_broad_question_reranks_at_least_the_usual_dense_candidates():
    # the dense list of a broad question is cut back to CANDIDATES after the re-rank pool is taken from it
    assert ranking.BROAD_RERANK >= ranking.CANDIDATES
    assert ranking.BROAD_ROWS > ranking.FTS_ROW_BUDGET


def test_full_text_weights_are_valid_for_ts_rank_d_c_b_a():
    # ts_rank rejects weights outside [0, 1] ("weight out of range"); the entry fields (A) count least
    assert len(ranking.FTS_RANK_WEIGHTS) == 4 and all(0 <= w <= 1 for w in ranking.FTS_RANK_WEIGHTS)
    assert ranking.FTS_RANK_WEIGHTS[3] < ranking.FTS_RANK_WEIGHTS[0]
    assert ranking.FTS_RANK_NORMALIZATION in (0, 1, 2, 4, 8, 16, 32)
