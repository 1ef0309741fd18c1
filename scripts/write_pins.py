#!/usr/bin/env python3
"""Write testing/data/demo_pins.json from the current code (chunk hashes and conflicts of the demo KB).

    python scripts/write_pins.py

Run it only when a change alters chunks or conflicts on purpose, and say why in the commit;
``tests/lib/test_pins.py`` compares the file with what the code computes now.
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from testing import pins  # noqa: E402

if __name__ == "__main__":
    data = pins.write()
    demo, syn = data["demo"], data["synthetic_601_seed7"]
    print(f"{pins.PINS}: demo {demo['entries']} entries, {sum(map(len, demo['chunks'].values()))} chunks, "
          f"{len(demo['conflicts'])} conflicts; synthetic {syn['entries']} entries, {syn['chunks']} chunks, "
          f"{len(syn['conflicts'])} conflicts")
