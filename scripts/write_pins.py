#!/usr/bin/env python3
"""Write testing/data/demo_pins.json from the current code (chunk hashes and conflicts of the demo KB).

    python scripts/write_pins.py

Run it only when a change alters chunks or conflicts on purpose, and say why in the commit;
``tests/lib/test_pins.py`` compares the file with what the code computes now.

The numbers of the demo evaluation (Recall@8, MRR, hit@1 per mode on the held-out parts of both gold sets,
the answer numbers with the stand-in) are pinned in ``testing/data/demo_eval_pins.json``. They need Odoo and
the e5 vectors, so the Odoo suite's ``TestDemoEval`` measures and writes them, not this script:

    PV_KB_WRITE_PINS=1 PV_KB_TEST_TAGS=/pv_kb:TestDemoEval scripts/test.sh
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from testing import pins  # noqa: E402

if __name__ == "__main__":
    if {"-h", "--help"} & set(sys.argv[1:]):
        print(__doc__)
        sys.exit(0)
    data = pins.write()
    demo, syn = data["demo"], data["synthetic_601_seed7"]
    print(f"{pins.PINS}: demo {demo['entries']} entries, {sum(map(len, demo['chunks'].values()))} chunks, "
          f"{len(demo['conflicts'])} conflicts; synthetic {syn['entries']} entries, {syn['chunks']} chunks, "
          f"{len(syn['conflicts'])} conflicts")
