"""The retriever's ranking constants, each with how it was chosen.

The retriever (``models/pv_kb_retriever.py``) and the tuning bench (``scripts/bench/tune_fusion.py``) read
them from here. Measurements: docs/retrieval.md (the fusion recipe) and docs/measurements.md (the HNSW search).
A constant marked "not measured" was set when the code was written and has never been compared with
other values: a candidate for the tuning bench, not a finding.
"""
from . import fusion

# --- candidates per signal -------------------------------------------------------------------------------
# Chunks each signal (dense sections, full text) delivers before fusion. Not measured: set with the first
# retriever; the recipe reads only the first RECIPE.depth (20) of each list.
CANDIDATES = 50
# Entry cards per question (one per entry, lib/search/entry_card.py). Not measured as a knob: the tuning grid varied
# the card weight, never the count; equal to RECIPE.depth.
CARD_CANDIDATES = 20
# HNSW candidate list per dense query (pgvector's default is 40). The index is approximate: on the evaluation
# base ef_search 50 gave dense MRR 0.821 against 0.843 exact, 100 gave 0.837; at 148,628 chunks 100 costs
# ~6 ms more per query than 50 (scripts/bench/run.sh scale 20000; docs/measurements.md, 2026-11-29).
# 2026-12-02, evaluation base (4,674 sections, e5-small): at 100 the index shares 0.94 of the exact top 8 with
# the build of lib/embed_job (m 16, ef_construction 200; 0.89 with pgvector's default build). An exact scan
# (3.5-4.6 ms at 3,600 rows) would have pushed hybrid p95 there to ~19 ms (docs/retrieval.md).
EF_SEARCH = 100

# --- full-text pruning (lib.fulltext.prune_tsquery) ------------------------------------------------------
# Query atoms matching more than this share of the chunks are dropped. Set when pruning came (2026-11-29);
# lib.search.fulltext's own default is 0.15. Compared 2026-12-02 on the pooled tuning questions (0.05 / 0.1 / 0.2 / 0.3,
# fused without the card list): hybrid MRR 0.889-0.892, hit@1 0.827-0.840 - a question or two apart; kept.
MAX_DF_RATIO = 0.1
# ... and the kept atoms match at most about this many chunks together. Not measured: lowered from 2,000 to
# 1,000 on 2026-11-29 with no number recorded for either.
FTS_ROW_BUDGET = 1000
# A question whose kept atoms still match more than this many rows is "broad" (no telling word). Not measured.
BROAD_ROWS = 2 * FTS_ROW_BUDGET
# For a broad question full text only re-ranks this many dense candidates. Not measured.
BROAD_RERANK = 200

# --- full-text score (PostgreSQL ts_rank) ------------------------------------------------------------------
# Weights of the tsvector's field classes D, C, B, A (D text, B heading, A id/title/tags/legal bases/topic).
# Chosen 2026-12-02 with the recipe below (scripts/bench/tune_fusion.py, the knob "fts_rank": every fold chose
# this one): the A fields are in every section of an entry, so with PostgreSQL's defaults (0.1, 0.2, 0.4, 1.0)
# a title or tag word outweighed the passage that answers; the ~600 distractor entries have titles and tags
# on the same topics. Text and heading now count fully, the entry fields a quarter.
FTS_RANK_WEIGHTS = (1.0, 1.0, 1.0, 0.25)
# ts_rank normalisation 1 (divide by 1 + log(length)): long sections do not win by size alone. Compared with 0
# (none) in the same run: 1 chosen in four of five folds.
FTS_RANK_NORMALIZATION = 1

# --- fusion ------------------------------------------------------------------------------------------------
# RRF's k (the default of the rrf_k setting): 10, chosen with the RRF recipe of 2026-12-02 morning (grid
# 10/30/60, every fold chose 10). The recipe below is a convex combination, which has no k: the setting only
# acts on an RRF recipe (a bench or a later choice).
RRF_K = 10
# How the lists are combined (lib.fusion.rank_entries), chosen with scripts/bench/tune_fusion.py on the pooled
# tuning parts of the demo gold set and of the tuning-only set data/demo_kb/goldset_abstimmung.yaml (156
# questions with expected ids), over the demo base with the 601 distractors (docs/retrieval.md, 2026-12-02
# "Fusion"): family by 5-fold cross-validation (convex CV R@8 0.958 / MRR 0.883 / hit@1 0.821, RRF 0.939 /
# 0.866 / 0.808, rescue 0.910 / 0.760 / 0.679), knobs on the whole tuning pool: min-max-normalised scores of
# dense sections (1.0), full text (1.5; 1.0 for value/§ questions) and the entry cards (0.5), all 50
# candidates of each list (depth None), further sections of an entry add 0.4^i. The Kernwerte boost
# (lib.fusion.Recipe's 1.25) was not varied.
RECIPE = fusion.Recipe(method="convex", k=RRF_K, weights=(("dense", 1.0), ("fts", 1.5), ("card", 0.5)),
                       value_weights=(("dense", 1.0), ("fts", 1.0), ("card", 0.5)), chunk_decay=0.4, depth=None)
