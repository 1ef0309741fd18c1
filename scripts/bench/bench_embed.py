"""Embedding throughput through the Ollama stand-in: batched vs one text per request, in one run.

    python scripts/bench/bench_embed.py [--texts 600] [--batch 32] [--rounds 3] [--overhead-ms 2]
                                        [--backend hash|e5]

The stand-in runs as its own process, as Ollama does, and sleeps ``--overhead-ms`` per HTTP request
(default: the stand-in's own default) to model a real server's fixed cost per call; HTTP, JSON and
the client's work come on top, as they do in production.  The per-text cost is the backend's own:
``hash`` is near zero (the ratio then shows what batching saves of the per-request cost), ``e5``
runs the real multilingual-e5-small on this CPU without the stand-in's vector cache (the ratio then
shows how little batching helps when the model's compute dominates).

Both ways embed the same texts (section chunks of the synthetic KB generator, with the header the
cron sends) after one unmeasured warm-up pass; the rounds alternate batched and one-per-request so
that drift of the machine hits both.  The ratio printed last is the median of the per-round ratios.
"""
import argparse
import contextlib
import os
import pathlib
import socket
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from lib.kb import chunking, batch as kb_batch
from lib.llm import client as ollama
from testing import standin, synthetic_kb  # noqa: E402


def chunk_texts(n, prefix=""):
    """``n`` section chunks of a synthetic base as the cron sends them (header + text)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = synthetic_kb.generate(tmp, entries=max(20, n // 4), seed=11, prefix="bench")
        files = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    batch = kb_batch.load_batch(files)
    texts = [prefix + chunking.embed_text(c, e.title, e.id) for e in batch.entries for c in chunking.chunk_entry(e)]
    if len(texts) < n:
        raise SystemExit(f"only {len(texts)} chunks generated, {n} asked for")
    return texts[:n]


@contextlib.contextmanager
def standin_process(backend, overhead_ms):
    """The stand-in CLI in a child process on a free port; yields its URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = dict(os.environ)
    env.pop("PV_KB_STANDIN_CACHE", None)   # measure the model, not the vector cache
    proc = subprocess.Popen([sys.executable, str(REPO / "scripts" / "ollama_standin.py"), "--port", str(port),
                             "--embed-model", f"m={backend}", "--overhead-ms", str(overhead_ms)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = proc.stdout.readline().strip()
        if not url.startswith("http"):
            raise SystemExit(f"stand-in did not start (exit code {proc.poll()})")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--texts", type=int, default=600)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--overhead-ms", type=float, default=standin.DEFAULT_OVERHEAD_MS)
    ap.add_argument("--backend", default="hash", choices=["hash", "e5"])
    args = ap.parse_args()
    texts = chunk_texts(args.texts, prefix="passage: " if args.backend == "e5" else "")
    with standin_process(args.backend, args.overhead_ms) as url:
        client = ollama.OllamaClient(ollama.OllamaConfig(url=url, read_timeout=600))
        if args.backend == "hash":
            client.embed("m", texts, batch_size=args.batch, origin=ollama.KB_TEXT)   # warm-up: the backend's word cache
        else:
            client.embed("m", texts[:2], origin=ollama.KB_TEXT)                       # warm-up: model load
        ways = {
            "batched": lambda: client.embed("m", texts, batch_size=args.batch, origin=ollama.KB_TEXT),
            "single": lambda: [client.embed("m", [text], batch_size=1, origin=ollama.KB_TEXT) for text in texts],
        }
        times = {way: [] for way in ways}
        for _ in range(args.rounds):
            for way, run in ways.items():
                t0 = time.perf_counter()
                run()
                times[way].append(time.perf_counter() - t0)
        client.close()
    ratios = [s / b for s, b in zip(times["single"], times["batched"])]
    print(f"texts={len(texts)} backend={args.backend} overhead={args.overhead_ms:g} ms/request "
          f"batch={args.batch} rounds={args.rounds} (stand-in in its own process)")
    for way, label in (("batched", f"batched (batch {args.batch})"), ("single", "one text per request")):
        runs = times[way]
        print(f"{label:<22} median {statistics.median(runs):.2f} s = "
              f"{len(texts) / statistics.median(runs):.0f} texts/s   runs: "
              + " ".join(f"{t:.2f}" for t in runs))
    print("ratio per round: " + " ".join(f"{r:.1f}x" for r in ratios))
    print(f"ratio (median): {statistics.median(ratios):.1f}x")


if __name__ == "__main__":
    main()
