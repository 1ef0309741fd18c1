"""Pure tests: import the engine as ``lib.*`` from the repository root."""
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
DEMO_KB = REPO / "data" / "demo_kb" / "wissensbasis"


@pytest.fixture(scope="module")
def server():
    """A local Ollama stand-in with the deterministic hash embedding ("hash-embed") and "standin-chat"."""
    from testing.standin import OllamaStandIn

    standin = OllamaStandIn(embed_models={"hash-embed": "hash"}, request_overhead_ms=0).start()
    yield standin
    standin.stop()


@pytest.fixture
def standin(server):
    """The module's stand-in, reset before and after each test."""
    server.reset()
    yield server
    server.reset()


@pytest.fixture
def blocks():
    """Context blocks for the answer engine's tests (answer_data.sample_blocks)."""
    from answer_data import sample_blocks

    return sample_blocks()
