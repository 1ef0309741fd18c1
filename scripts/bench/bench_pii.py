"""Personal-data gate (lib/pii/gate.py): precision and recall per detector and the gate's time per question.

    python scripts/bench/bench_pii.py [--set data/pii_eval.yaml] [--dev] [--names N] [--rounds R]

The default set is the held-out evaluation set; ``--dev`` scores the development set the detectors
were tuned on instead.  Timing: ``gate_request`` (question + a two-turn history, as the agent calls
it) over every question of the set, ``--rounds`` times; the known names are the set's own plus
``--names`` generated ones (an Odoo database with that many employees and contacts), indexed once.
"""
import argparse
import pathlib
import random
import statistics
import sys
import time

import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from lib.pii import gate as pii, names as pii_names, scoring as pii_scoring

FIRST = ["Anna", "Lena", "Sophie", "Marie", "Hannah", "Lukas", "David", "Paul", "Jakob", "Felix", "Elias", "Tobias",
         "Sarah", "Laura", "Jana", "Emma", "Leon", "Simon", "Noah", "Fabian", "Ines", "Vesna", "Goran", "Emre"]
LAST = ["Gruber", "Wagner", "Bauer", "Pichler", "Steiner", "Moser", "Mayer", "Hofer", "Leitner", "Berger", "Fuchs",
        "Eder", "Fischer", "Schmid", "Winkler", "Weber", "Schwarz", "Maier", "Schneider", "Reiter", "Mayr", "Schmidt",
        "Wimmer", "Egger", "Brunner", "Lang", "Baumgartner", "Auer", "Binder", "Lechner", "Wolf", "Wallner",
        "Aigner", "Ebner", "Koller", "Lehner", "Haas", "Schuster", "Holzer", "Strasser"]


def fmt(value):
    return "   –  " if value is None else f"{value:6.3f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default=str(REPO / "data" / "pii_eval.yaml"))
    parser.add_argument("--dev", action="store_true", help="score tests/lib/data/pii_dev.yaml")
    parser.add_argument("--names", type=int, default=2000, help="generated known names added for the timing")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    path = REPO / "tests" / "lib" / "data" / "pii_dev.yaml" if args.dev else pathlib.Path(args.set)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    result = pii_scoring.score_cases(data)
    print(f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path}: {result['questions']} questions, "
          f"{result['clean_questions']} without personal data")
    print(f"{'detector':<11} {'expected':>8} {'found':>6} {'recall':>7} {'precision':>9}")
    for name, row in result["rows"].items():
        print(f"{name:<11} {row['expected']:>8} {row['found']:>6} {fmt(row['recall']):>7} {fmt(row['precision']):>9}")
    for case_id, detector, text in result["misses"]:
        print(f"  missed  {case_id} {detector}: {text!r}")
    for case_id, detector, text in result["extras"]:
        print(f"  wrong   {case_id} {detector}: {text!r}")

    rng = random.Random(13)
    names = list(data.get("known_names") or []) + [f"{rng.choice(FIRST)} {rng.choice(LAST)}-{i}" if i % 7 == 0
                                                   else f"{rng.choice(FIRST)} {rng.choice(LAST)}"
                                                   for i in range(args.names)]
    t0 = time.perf_counter()
    known = pii_names.KnownNames.build(names)
    build_ms = (time.perf_counter() - t0) * 1000
    history = [{"role": "user", "content": "Wie hoch ist der Freibetrag für Sonderzahlungen?"},
               {"role": "assistant", "content": "Der Freibetrag beträgt € 620 pro Jahr [lb-sz-01] (Stand 2025-01)."}]
    times = []
    for _ in range(args.rounds):
        for case in data["questions"]:
            t0 = time.perf_counter()
            pii.gate_request(case["text"], history=history, known_names=known,
                             allow_list=data.get("allow_list") or [])
            times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    print(f"gate per question (question + 2 history turns, {len(names)} known names): "
          f"median {statistics.median(times):.2f} ms, p95 {times[int(len(times) * 0.95) - 1]:.2f} ms, "
          f"max {times[-1]:.2f} ms over {len(times)} calls; name index built in {build_ms:.1f} ms")


if __name__ == "__main__":
    main()
