"""Split a KB folder into slices of N entries, each a valid batch with its own kb.json (benchmarks only).

    python scripts/bench/split_kb.py KB_ROOT OUT_DIR N
"""
import json
import pathlib
import shutil
import sys


def main(root, out, size):
    root, out = pathlib.Path(root), pathlib.Path(out)
    registry = json.loads((root / "kb.json").read_text(encoding="utf-8"))
    entries = registry["entries"]
    shutil.rmtree(out, ignore_errors=True)
    for n, start in enumerate(range(0, len(entries), size)):
        part = entries[start:start + size]
        dest = out / f"slice-{n:03d}"
        (dest / "dokumente").mkdir(parents=True)
        for record in part:
            shutil.copy(root / record["file"], dest / record["file"])
        (dest / "kb.json").write_text(json.dumps(dict(registry, count=len(part), entries=part), ensure_ascii=False),
                                      encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
