#!/usr/bin/env python3
"""Command of the synthetic KB generator (the code lives in ``testing/synthetic_kb.py``).

    python scripts/gen_synthetic_kb.py OUT_DIR [--entries 601] [--seed 7] [--prefix syn] [--dangling 0] [--zip OUT.zip]
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from testing.synthetic_kb import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
