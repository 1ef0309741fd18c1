"""Test doubles of pv_kb, kept beside the product and never loaded by it.

* ``standin`` — a local stand-in for an Ollama server (HTTP API, embedders,
  a rule-following chat responder, faults and timing for tests);
* ``synthetic_kb`` — a generator of synthetic knowledge bases in the contract
  format (distractors for evaluation, batches nobody has seen for e2e tests);
* ``pins`` — what the pinning tests compare: the demo KB's chunk hashes and
  detected conflicts, written to ``testing/data/demo_pins.json`` by
  ``scripts/write_pins.py``;
* ``conflict_bases`` — the blind conflict test bases scored against their
  ground truth (tests and ``scripts/bench/run.sh conflict-bases``).

Only tests, scripts and benchmarks import this package; the addon's
``__init__``, ``models/``, ``controllers/`` and ``lib/`` never do (a test in
``tests/lib/test_layout.py`` checks it). Modules import each other
relatively, so the package works as ``testing.*`` (pytest, scripts) and as
``odoo.addons.pv_kb.testing.*`` (the Odoo suite).
"""
