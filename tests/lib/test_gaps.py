"""Gap grouping of the question log: nearest topic and leader clustering (lib/cockpit/gaps.py)."""
import datetime as dt
import pathlib
import random
import re

import pytest

from lib.cockpit import gaps
from lib.kb import batch as kb_batch

from testing.standin.embedders import hash_embed   # the stand-in's deterministic hash embedding

DEMO_KB = pathlib.Path(__file__).resolve().parents[2] / "data" / "demo_kb" / "wissensbasis"

TEMPLATES = [
    "Wie ist {a} bei einem Dienstnehmer in Teilzeit zu behandeln?",
    "Was gilt für {a}, wenn der Dienstvertrag mitten im Monat beginnt?",
    "Gibt es bei {a} eine Sonderregel für Lehrlinge?",
    "Welche Frist gilt für {a} und {b}?",
    "Muss {a} in der Abrechnung gesondert ausgewiesen werden?",
    "Wie wirkt sich {a} auf {b} aus?",
    "Unser Steuerberater fragt nach {a} – wo steht das?",
]


def _demo_entries():
    files = {p.relative_to(DEMO_KB).as_posix(): p.read_bytes() for p in DEMO_KB.rglob("*") if p.is_file()}
    return kb_batch.load_batch(files).entries


def _topic_terms(entries):
    """Words users would use for each topic: its entries' tags and long title words, only those that
    belong to one topic (a question on a word of two topics has no one known topic)."""
    terms = {}
    for entry in entries:
        words = list(entry.tags) + re.findall(r"[A-ZÄÖÜ][\wäöüß-]{5,}", entry.title)
        terms.setdefault(entry.topic, set()).update(words)
    owners = {}
    for topic, words in terms.items():
        for word in words:
            owners.setdefault(word.lower(), set()).add(topic)
    return {t: sorted(w for w in words if len(owners[w.lower()]) == 1) for t, words in terms.items()}


def synthetic_log(entries, per_topic=15, seed=12):
    """A deterministic log of gap questions with known topics (``truth``: query id -> topic)."""
    rng = random.Random(seed)
    terms = _topic_terms(entries)
    log, truth = [], {}
    statuses = [("verweigert", ""), ("unsicher", ""), ("beantwortet", "down")]
    start = dt.date(2026, 9, 1)
    qid = 0
    for topic in sorted(terms):
        for _ in range(per_topic):
            qid += 1
            a, b = rng.sample(terms[topic], 2) if len(terms[topic]) > 1 else (terms[topic][0],) * 2
            text = rng.choice(TEMPLATES).format(a=a, b=b)
            status, feedback = statuses[qid % 3]
            log.append(gaps.LoggedQuestion(qid, text, status, feedback, "", start + dt.timedelta(days=qid % 90)))
            truth[qid] = topic
    rng.shuffle(log)
    # embedded as the health check does it: without the words many questions share
    for question, focus in zip(log, gaps.focus_texts([q.question for q in log])):
        question.vector = hash_embed("query: " + focus)
    return log, truth


def entry_profiles(entries):
    """(topic, vector) per entry, embedded as the health check does it."""
    return [(e.topic, hash_embed("passage: " + gaps.profile_text(e.title, e.tags))) for e in entries]


@pytest.fixture(scope="module")
def demo():
    entries = _demo_entries()
    log, truth = synthetic_log(entries)
    return entries, log, truth, entry_profiles(entries)


def test_synthetic_log_is_large_and_deterministic(demo):
    entries, log, truth, _ = demo
    assert len(log) >= 200 and len(set(truth.values())) == 15
    again, _ = synthetic_log(entries)
    assert [q.question for q in again] == [q.question for q in log]


def test_nearest_topic_grouping_puts_at_least_90_percent_into_their_topic(demo):
    _entries, log, truth, centroids = demo
    groups = gaps.group_by_topic(log, centroids)
    rate = gaps.purity(groups, truth, {g.key: g.key.split(":", 1)[1] for g in groups})
    print(f"\nnearest-topic grouping: {rate:.3f} of {len(log)} questions in their topic's group "
          f"({len(groups)} groups)")
    assert rate >= 0.90
    assert sum(len(g.query_ids) for g in groups) == len(log)


def test_grouping_would_fail_on_a_wrong_centroid_map(demo):
    """The measure can fail: with the topics' centroids rotated, almost nothing lands right."""
    _entries, log, truth, centroids = demo
    names = sorted({t for t, _ in centroids})
    shift = {names[i]: names[(i + 1) % len(names)] for i in range(len(names))}
    rotated = [(shift[t], v) for t, v in centroids]
    groups = gaps.group_by_topic(log, rotated)
    assert gaps.purity(groups, truth, {g.key: g.key.split(":", 1)[1] for g in groups}) < 0.3


def test_leader_clustering_is_deterministic_and_mostly_pure(demo):
    _entries, log, truth, _ = demo
    groups = gaps.cluster(log, threshold=0.5)
    again = gaps.cluster(list(reversed(log)), threshold=0.5)
    assert [(g.key, g.query_ids) for g in groups] == [(g.key, g.query_ids) for g in again]
    rate = gaps.purity(groups, truth)
    print(f"\nleader clustering (cosine 0.5): {len(groups)} clusters, purity {rate:.3f}")
    assert sum(len(g.query_ids) for g in groups) == len(log)
    assert rate >= 0.8


def test_cluster_keys_stay_when_the_log_grows(demo):
    _entries, log, _truth, _ = demo
    ordered = sorted(log, key=lambda q: q.query_id)
    first = {g.key: set(g.query_ids) for g in gaps.cluster(ordered[:100], 0.5)}
    later = {g.key: set(g.query_ids) for g in gaps.cluster(ordered, 0.5)}
    for key, members in first.items():
        assert key in later and members <= later[key]


def test_counts_per_status_and_week():
    day = dt.date(2026, 11, 30)   # Monday of ISO week 49
    vec = [1.0, 0.0]
    log = [gaps.LoggedQuestion(1, "a", "verweigert", date=day, vector=vec),
           gaps.LoggedQuestion(2, "b", "unsicher", date=day + dt.timedelta(days=6), vector=vec),
           gaps.LoggedQuestion(3, "c", "beantwortet", "down", date=day + dt.timedelta(days=7), vector=vec),
           gaps.LoggedQuestion(4, "d", "beantwortet", date=day, vector=[0.0, 1.0])]
    assert [gaps.is_gap(q) for q in log] == [True, True, True, False]
    (group,) = gaps.group_by_topic([q for q in log if gaps.is_gap(q)], [("x", [1.0, 0.1]), ("y", [0.0, 1.0])],
                                   {"x": "Thema X"})
    assert (group.label, group.refused, group.unsure, group.thumbs_down) == ("Thema X", 1, 1, 1)
    assert group.per_week == {"2026-W49": 2, "2026-W50": 1}


def test_focus_texts_drop_words_most_questions_share():
    texts = [f"Wie hoch ist der Wert {i}?" for i in range(10)] + ["Wie hoch"]
    focused = gaps.focus_texts(texts, max_share=0.2, min_docs=2)
    assert focused[0] == "0" and focused[9] == "9"
    assert focused[10] == "Wie hoch"   # nothing left: the text stays whole


def test_question_without_vector_goes_to_ohne_thema_and_no_cluster():
    log = [gaps.LoggedQuestion(1, "a", "verweigert", vector=None)]
    (group,) = gaps.group_by_topic(log, [("x", [1.0])])
    assert group.key == "topic:-" and group.label == "ohne Thema"
    assert gaps.cluster(log) == []
