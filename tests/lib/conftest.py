"""Pure tests: import the engine as ``lib.*`` from the repository root."""
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]
DEMO_KB = REPO / "data" / "demo_kb" / "wissensbasis"
