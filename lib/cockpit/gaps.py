"""Gaps from the question log: what the base is asked and cannot answer.

Refusals, *unsicher* answers and 👎 ratings are grouped two ways (no Odoo import):

* by **nearest topic**: the topic of the entry whose profile (title and tags, embedded) is most
  similar to the question's embedding;
* by **similar question**: greedy leader clustering of the question embeddings with a cosine
  threshold, in log order — deterministic, and a later question never moves an earlier one, so a
  group's key (its first question) stays stable while the log grows.

Before embedding, words shared by many logged questions are dropped (:func:`focus_texts`): they
say how people ask, not what about. Vectors come as lists of floats (or arrays); they are normalised here.
Both groupings are vectorised with numpy: the topic match is one matrix product, the leader clustering one
matrix-vector product per question against the leaders so far (the run takes a bounded window of the log,
``pv.kb.gap._gap_questions``).
"""
from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

GAP_STATUSES = ("verweigert", "unsicher")


@dataclass
class LoggedQuestion:
    query_id: int
    question: str
    status: str
    feedback: str = ""            # "up", "down" or ""
    comment: str = ""
    date: dt.date | None = None
    vector: Sequence[float] | None = None


@dataclass
class Group:
    key: str
    label: str
    kind: str                      # "topic" or "cluster"
    query_ids: list[int] = field(default_factory=list)
    per_week: dict[str, int] = field(default_factory=dict)   # ISO week "2026-W48" -> count
    refused: int = 0
    unsure: int = 0
    thumbs_down: int = 0
    similarity: float = 0.0        # mean similarity to the topic centroid / cluster leader


def is_gap(question: LoggedQuestion) -> bool:
    return question.status in GAP_STATUSES or question.feedback == "down"


def normalise(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else [0.0 for _ in vector]


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b))


def mean_vector(vectors: Iterable[Sequence[float]]) -> list[float] | None:
    total: list[float] | None = None
    count = 0
    for vector in vectors:
        vector = normalise(vector)
        total = list(vector) if total is None else [t + v for t, v in zip(total, vector)]
        count += 1
    return normalise(total) if total is not None and count else None


def iso_week(day: dt.date | None) -> str:
    if day is None:
        return "?"
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


def _count(group: Group, question: LoggedQuestion) -> None:
    group.query_ids.append(question.query_id)
    week = iso_week(question.date)
    group.per_week[week] = group.per_week.get(week, 0) + 1
    if question.status == "verweigert":
        group.refused += 1
    elif question.status == "unsicher":
        group.unsure += 1
    if question.feedback == "down":
        group.thumbs_down += 1


def profile_text(title: str, tags: Iterable[str]) -> str:
    """What an entry is about, as embedded for the topic match: its title and tags."""
    return f"{title}. " + ", ".join(t for t in tags if t)


_WORD_RE = re.compile(r"[^\W_]+")


def focus_texts(texts: Sequence[str], max_share: float = 0.05, min_docs: int = 3) -> list[str]:
    """The texts without the words that many of them share ("Wie", "gilt", "Dienstnehmer" …).

    A word in more than ``max(min_docs, max_share × len(texts))`` texts says how people ask,
    not what they ask about; it is dropped before embedding. A text left empty stays whole.
    """
    tokenised = [_WORD_RE.findall((t or "").lower()) for t in texts]
    df: dict[str, int] = {}
    for words in tokenised:
        for word in set(words):
            df[word] = df.get(word, 0) + 1
    limit = max(min_docs, max_share * len(texts))
    out = []
    for text, words in zip(texts, tokenised):
        kept = [w for w in words if df[w] <= limit]
        out.append(" ".join(kept) if kept else (text or ""))
    return out


def _unit_rows(vectors: Sequence[Sequence[float]]) -> np.ndarray:
    """The vectors as rows of a float32 matrix, each scaled to length 1 (zero rows stay zero)."""
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2:
        matrix = matrix.reshape(len(vectors), -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


def nearest_topic(vector: Sequence[float], references: Sequence[tuple[str, Sequence[float]]]) -> tuple[str, float]:
    """(topic, similarity) of the most similar reference vector (an entry profile or a topic
    centroid); ties go to the earlier reference."""
    best, best_sim = "", -2.0
    for topic, reference in references:
        similarity = dot(vector, reference)
        if similarity > best_sim + 1e-12:
            best, best_sim = topic, similarity
    return best, best_sim


def group_by_topic(questions: Iterable[LoggedQuestion], references: Sequence[tuple[str, Sequence[float]]],
                   labels: dict[str, str] | None = None) -> list[Group]:
    """One group per nearest topic (topic of the most similar reference vector); questions without
    a vector go to the group "ohne Thema". Ties go to the reference whose topic sorts first."""
    references = sorted(((t, v) for t, v in references if v is not None and len(v)), key=lambda r: r[0])
    ordered = sorted(questions, key=lambda q: q.query_id)
    with_vector = [i for i, q in enumerate(ordered) if q.vector is not None and len(q.vector)]
    topic_of: dict[int, tuple[str, float]] = {}
    if references and with_vector:
        ref_matrix = _unit_rows([v for _t, v in references])
        sims = _unit_rows([ordered[i].vector for i in with_vector]) @ ref_matrix.T
        best = sims.argmax(axis=1)           # the first maximum: the earlier reference
        for row, index in enumerate(with_vector):
            topic_of[index] = (references[best[row]][0], float(sims[row, best[row]]))
    groups: dict[str, Group] = {}
    sums: dict[str, float] = {}
    for index, question in enumerate(ordered):
        topic, similarity = topic_of.get(index, ("", 0.0))
        key = f"topic:{topic or '-'}"
        group = groups.get(key)
        if group is None:
            label = (labels or {}).get(topic, topic) if topic else "ohne Thema"
            group = groups[key] = Group(key, label, "topic")
        _count(group, question)
        sums[key] = sums.get(key, 0.0) + similarity
    for key, group in groups.items():
        group.similarity = sums[key] / len(group.query_ids)
    return sorted(groups.values(), key=lambda g: (-len(g.query_ids), g.key))


def cluster(questions: Iterable[LoggedQuestion], threshold: float = 0.8) -> list[Group]:
    """Greedy leader clustering by cosine similarity, in query-id order.

    Each question joins the most similar existing leader when that similarity reaches
    ``threshold``, else it leads a new cluster. Questions without a vector are left out.
    One matrix-vector product per question against the leaders so far (numpy).
    """
    ordered = [q for q in sorted(questions, key=lambda q: q.query_id) if q.vector is not None and len(q.vector)]
    if not ordered:
        return []
    matrix = _unit_rows([q.vector for q in ordered])
    leaders = np.empty_like(matrix)           # rows 0..count-1 are the leaders' vectors
    count = 0
    groups: list[Group] = []
    sums: list[float] = []
    for row, question in enumerate(ordered):
        vector = matrix[row]
        best, best_sim = -1, -2.0
        if count:
            sims = leaders[:count] @ vector
            best = int(sims.argmax())
            best_sim = float(sims[best])
        if best < 0 or best_sim < threshold:
            label = " ".join(question.question.split())
            groups.append(Group(f"cluster:{question.query_id}", label[:120], "cluster"))
            sums.append(0.0)
            leaders[count] = vector
            best, best_sim = count, 1.0
            count += 1
        _count(groups[best], question)
        sums[best] += best_sim
    for group, total in zip(groups, sums):
        group.similarity = total / len(group.query_ids)
    return sorted(groups, key=lambda g: (-len(g.query_ids), g.key))


def purity(groups: Iterable[Group], truth: dict[int, str], group_topic: dict[str, str] | None = None) -> float:
    """Share of questions whose group is the group of their true topic.

    For topic groups the group's topic is its key; for clusters (``group_topic`` None) it is the
    majority topic of the cluster's questions.
    """
    total = hits = 0
    for group in groups:
        if group_topic is not None:
            topic = group_topic.get(group.key)
        else:
            counts: dict[str, int] = {}
            for qid in group.query_ids:
                counts[truth[qid]] = counts.get(truth[qid], 0) + 1
            topic = max(sorted(counts), key=counts.get) if counts else None
        for qid in group.query_ids:
            total += 1
            hits += truth[qid] == topic
    return hits / total if total else 0.0
