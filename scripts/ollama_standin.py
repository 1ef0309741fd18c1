#!/usr/bin/env python3
"""Command of the local Ollama stand-in (the code lives in ``testing/standin/``).

    python scripts/ollama_standin.py --port 11435 [--embed-model NAME=e5|hash ...] [--chat-model NAME ...]

serves in the foreground and prints its URL; ``--help`` lists the options.
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from testing.standin.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
