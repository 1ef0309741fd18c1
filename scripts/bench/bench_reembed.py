"""Re-embedding through the cron's own code path, batched vs one text per request, in one run.

    scripts/bench/run.sh reembed DB        (see docs/measurements.md, "Benchmark commands"; DB e.g. pv_kb_bench_import)

Runs inside ``odoo-bin shell``: ``pv.kb.chunk._embed_pending`` (the scheduled action's work: pending
query, header, Ollama request, vector UPDATEs in a savepoint) against the stand-in at ``STANDIN_URL``
serving the model ``bench-hash``, once with the configured batch size and once with batch size 1,
over the same ``BENCH_CHUNKS`` chunks, alternating for ``BENCH_ROUNDS`` rounds.  Everything is rolled
back at the end: the database keeps its embeddings.  Commits per batch (what the cron adds) are left
out: they would only widen the gap.
"""
import os
import statistics
import time

env = env  # noqa: F821 - provided by `odoo-bin shell`
n_chunks = int(os.environ.get("BENCH_CHUNKS", "640"))
rounds = int(os.environ.get("BENCH_ROUNDS", "3"))
batch = int(os.environ.get("BENCH_BATCH", "32"))
overrides = {"ollama_url": os.environ["STANDIN_URL"], "embedding_model": "bench-hash",
             "query_prefix": "", "passage_prefix": ""}
Chunk = env["pv.kb.chunk"]
settings = env["pv.kb.settings"]._get(overrides)
client = env["pv.kb.settings"]._client(settings)
try:
    # warm-up, not measured: retype the column for the stand-in's dimension and embed the whole base
    warm = Chunk._embed_pending(client, dict(settings, embed_batch_size=batch))
    env.cr.execute("SELECT c.id FROM pv_kb_chunk c JOIN pv_kb_entry e ON e.id = c.entry_id"
                   " WHERE e.active ORDER BY c.id LIMIT %s", [n_chunks])
    ids = [row[0] for row in env.cr.fetchall()]
    times = {"batched": [], "single": []}
    for _ in range(rounds):
        for way, size in (("batched", batch), ("single", 1)):
            env.cr.execute("UPDATE pv_kb_chunk SET embedded_hash = NULL WHERE id = ANY(%s)", [ids])
            Chunk.invalidate_model(["embedded_hash"])
            t0 = time.perf_counter()
            result = Chunk._embed_pending(client, dict(settings, embed_batch_size=size))
            times[way].append(time.perf_counter() - t0)
            assert result["done"] == len(ids) and result["remaining"] == 0, result
    ratios = [s / b for s, b in zip(times["single"], times["batched"])]
    print(f"{len(ids)} chunks re-embedded by pv.kb.chunk._embed_pending (base: {warm['done']} chunks), "
          f"stand-in hash backend, {rounds} rounds")
    for way, label in (("batched", f"batch {batch}"), ("single", "one text per request")):
        med = statistics.median(times[way])
        print(f"{label:<22} median {med:.2f} s = {len(ids) / med:.0f} chunks/s   runs: "
              + " ".join(f"{t:.2f}" for t in times[way]))
    print("ratio per round: " + " ".join(f"{r:.1f}x" for r in ratios))
    print(f"ratio (median): {statistics.median(ratios):.1f}x")
finally:
    client.close()
    env.cr.rollback()
