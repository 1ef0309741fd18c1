"""Re-embedding throughput through the Ollama stand-in: batched vs one text per request, in one run.

    python scripts/bench/bench_embed.py [--texts 600] [--batch 32] [--overhead-ms 20] [--backend hash]

The stand-in sleeps ``--overhead-ms`` per HTTP request to model a real server's fixed cost per call
(request parsing, model scheduling); the per-text cost is the backend's own (``hash``: tiny, ``e5``:
the real multilingual-e5-small on this CPU).  Texts are section chunks of the synthetic KB generator.
"""
import argparse
import pathlib
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from lib import chunking, kb_format, ollama  # noqa: E402
from scripts import gen_synthetic_kb  # noqa: E402
from scripts.ollama_standin import OllamaStandIn  # noqa: E402


def chunk_texts(n):
    with tempfile.TemporaryDirectory() as tmp:
        root = gen_synthetic_kb.generate(tmp, entries=max(20, n // 4), seed=11, prefix="bench")
        files = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    batch = kb_format.load_batch(files)
    texts = [chunking.embed_text(c, e.title, e.id) for e in batch.entries for c in chunking.chunk_entry(e)]
    return texts[:n]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--texts", type=int, default=600)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--overhead-ms", type=float, default=20.0)
    ap.add_argument("--backend", default="hash", choices=["hash", "e5"])
    args = ap.parse_args()
    texts = chunk_texts(args.texts)
    with OllamaStandIn(embed_models={"m": args.backend}, request_overhead_ms=args.overhead_ms) as server:
        client = ollama.OllamaClient(ollama.OllamaConfig(url=server.url))
        client.embed("m", texts[:2])   # warm up (model load)
        t0 = time.perf_counter()
        client.embed("m", texts, batch_size=args.batch)
        batched = time.perf_counter() - t0
        t0 = time.perf_counter()
        for text in texts:
            client.embed("m", [text], batch_size=1)
        single = time.perf_counter() - t0
    print(f"texts={len(texts)} backend={args.backend} overhead={args.overhead_ms:.0f} ms/request")
    print(f"batched (batch {args.batch}): {batched:.2f} s = {len(texts) / batched:.0f} texts/s")
    print(f"one per request:        {single:.2f} s = {len(texts) / single:.0f} texts/s")
    print(f"ratio: {single / batched:.1f}x")


if __name__ == "__main__":
    main()
