"""The e5 vectors the test suites need, shipped as test data (``testing/data/e5-vectors.npz``).

multilingual-e5-small embeds ~3.5 section-sized German texts a second on two CPU cores, so the
demo gold-set evaluation (~4,700 sections and questions) would cost every fresh machine ~20 minutes
for the same vectors. The file holds them in float16 with each text's token count and the texts
themselves; a text is looked up by the first 16 bytes of
``sha256("multilingual-e5-small|<query or passage>|<text>")``, computed from the stored texts when the
file is loaded. The texts also let ``tests/lib/test_e5_shipped.py`` re-embed a random sample with the
real model and check that the shipped vectors have not drifted from it (cosine ≥ 0.999). To keep the
file small (it is in the repository), the vectors are stored byte plane by byte plane (all low bytes of
the float16 values, then all high bytes: the high bytes repeat a lot) and LZMA-compressed, the texts
LZMA-compressed as well: 3.9 MB instead of 4.8 MB with NumPy's zip compression, losslessly.

The stand-in's e5 backend looks a text up here first, then in its SQLite cache
(``PV_KB_STANDIN_CACHE``), and computes only what neither holds. ``PV_KB_STANDIN_SHIPPED=0``
switches the shipped vectors off. ``scripts/standin_e5_vectors.py --demo-eval`` writes the file: the
texts the demo evaluation embeds (built as the addon builds them, plus any a real run recorded with
``PV_KB_STANDIN_RECORD``) with the vectors real runs left in the cache.
"""
from __future__ import annotations

import hashlib
import lzma
import os
import pathlib
import threading
from typing import Iterable, NamedTuple

import numpy as np

MODEL = "multilingual-e5-small"
PATH = pathlib.Path(__file__).resolve().parents[1] / "data" / "e5-vectors.npz"
_SEPARATOR = b"\x1e"   # between the stored texts (record separator; never in KB text)


class Record(NamedTuple):
    is_query: bool
    text: str          # without the "query: " / "passage: " prefix
    vector: np.ndarray
    tokens: int


def key(is_query: bool, text: str) -> bytes:
    """The lookup key of one text: 16 bytes of sha256 over the model, the mode and the text."""
    mode = "query" if is_query else "passage"
    return hashlib.sha256(f"{MODEL}|{mode}|{text}".encode("utf-8")).digest()[:16]


def enabled() -> bool:
    return os.environ.get("PV_KB_STANDIN_SHIPPED", "1") != "0"


class ShippedVectors:
    """Read-only lookup in the shipped file, loaded on first use."""

    def __init__(self, path: pathlib.Path = PATH) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._index: dict[bytes, int] | None = None
        self._vectors = self._tokens = self._modes = self._texts = None

    def _load(self) -> dict[bytes, int]:
        with self._lock:
            if self._index is None:
                if not self.path.exists():
                    self._index = {}
                    return self._index
                with np.load(self.path) as data:
                    self._modes, self._tokens = data["is_query"], data["tokens"]
                    rows, dims = (int(n) for n in data["shape"])
                    planes = np.frombuffer(lzma.decompress(data["vectors_lzma"].tobytes()), dtype=np.uint8)
                    blob = lzma.decompress(data["texts_lzma"].tobytes())
                self._vectors = planes.reshape(2, rows * dims).T.copy().view(np.float16).reshape(rows, dims)
                self._texts = blob.decode("utf-8").split(_SEPARATOR.decode()) if rows else []
                self._index = {key(bool(self._modes[i]), text): i for i, text in enumerate(self._texts)}
            return self._index

    def __len__(self) -> int:
        return len(self._load())

    def lookup(self, is_query: bool, text: str) -> tuple[list[float], int] | None:
        """(vector as floats, token count) of a text, or None when it is not shipped."""
        row = self._load().get(key(is_query, text))
        if row is None:
            return None
        return self._vectors[row].astype(np.float32).astype(float).tolist(), int(self._tokens[row])

    def records(self) -> list[Record]:
        """Every shipped text with its vector, in file order (for the drift check)."""
        if not self._load():
            return []
        return [Record(bool(self._modes[i]), text, self._vectors[i], int(self._tokens[i]))
                for i, text in enumerate(self._texts)]


def write(records: Iterable[Record], path: pathlib.Path = PATH) -> int:
    """Write the shipped file (sorted by key, so the same records give the same bytes); returns the count."""
    unique = {key(r.is_query, r.text): r for r in records}
    ordered = [unique[k] for k in sorted(unique)]
    if any(_SEPARATOR.decode() in r.text for r in ordered):
        raise ValueError("a text holds the record separator")
    path.parent.mkdir(parents=True, exist_ok=True)
    vectors = np.asarray([r.vector for r in ordered], dtype=np.float16).reshape(len(ordered), -1)
    planes = vectors.reshape(-1).view(np.uint8).reshape(-1, 2).T.tobytes()   # low bytes, then high bytes
    packed = lambda data: np.frombuffer(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME), dtype=np.uint8)  # noqa: E731
    np.savez(
        path,
        shape=np.asarray(vectors.shape, dtype=np.int64),
        vectors_lzma=packed(planes),
        tokens=np.asarray([r.tokens for r in ordered], dtype=np.uint16),
        is_query=np.asarray([r.is_query for r in ordered], dtype=np.bool_),
        texts_lzma=packed(_SEPARATOR.join(r.text.encode("utf-8") for r in ordered)),
    )
    return len(ordered)


SHIPPED = ShippedVectors()
