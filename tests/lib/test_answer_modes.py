"""Answer modes as plug-ins (lib/answer/modes): the registry, the mode policy per chat model, and a mode of a
test's own answering through the same pipeline steps as the shipped ones."""
import pytest

from lib.answer import modes, respond, stages
from lib.answer.types import AgentAnswer


def test_the_shipped_modes_in_their_order():
    assert modes.keys() == ["text", "structured", "selection"]
    for mode in modes.registered():
        assert mode.system_prompt().strip() and mode.reserve_tokens > 0 and mode.label and mode.title
    assert [m.key for m in modes.registered() if m.bakeoff_default] == ["text", "structured"]
    assert modes.get("gone").key == "text", "an unknown key answers in free text"


def test_modes_per_model():
    text = "qwen2.5-coder:1.5b = structured\n# comment\nqwen3=text\nbroken line\nx=other"
    assert modes.parse_modes(text) == {"qwen2.5-coder:1.5b": "structured", "qwen3": "text"}
    assert modes.mode_for("qwen2.5-coder:1.5b", text) == "structured"
    assert modes.mode_for("qwen3:32b", text) == "text"
    assert modes.mode_for("llama3", text, default="structured") == "structured"
    assert modes.mode_for("llama3", "", default="nonsense") == "text"
    assert modes.parse_modes("a:1=structured; b=text") == {"a:1": "structured", "b": "text"}


def test_schemas_are_told_apart_by_their_marking_property():
    assert modes.for_schema({"properties": {"verweigert": {}, "saetze": {}}}).key == "selection"
    assert modes.for_schema({"properties": {"verweigert": {}, "aussagen": {}}}).key == "structured"
    assert modes.for_schema(None) is None and modes.for_schema({"properties": {"x": {}}}) is None


@pytest.fixture
def echo_mode():
    """A mode of the test's own: shapes the context and answers without a model."""
    calls = []

    def shape(prepared):
        calls.append("shape")
        prepared.messages[-1] = dict(prepared.messages[-1], content="ECHO " + prepared.messages[-1]["content"])

    def answer(prepared, client, on_delta, deadline, cancel, timings):
        calls.append("answer")
        return AgentAnswer(status="beantwortet", answer="echo: " + prepared.question, answer_mode="echo")

    mode = modes.register(modes.AnswerMode(key="echo", label="Echo", title="Echo (test)", system_prompt=lambda: "S",
                                           answer=answer, shape_context=shape, schema_key="echo", reserve_tokens=1))
    yield mode, calls
    modes.unregister("echo")


def test_a_registered_mode_is_listed_chosen_and_answers(echo_mode):
    mode, calls = echo_mode
    assert modes.keys()[-1] == "echo" and modes.get("echo") is mode
    assert modes.mode_for("tiny:1b", "tiny=echo") == "echo"
    assert modes.for_schema({"properties": {"echo": {}}}) is mode

    class Retrieval:
        entries, entry_ids, ollama_error, degraded, timings = [], [], None, None, {}

    prepared = respond.PreparedQuestion(question="Frage?", query="Frage?", history=[], settings={
        "answer_time_limit": 5}, texts={}, started=0.0, retrieval=Retrieval(), answer_mode="echo",
        plan={"system": "S", "max_blocks": 4, "max_chars": 1000})
    stages.finish_context(prepared)
    assert prepared.messages[-1]["content"].startswith("ECHO ")

    class Client:
        def close(self):
            calls.append("close")

    result = respond.respond(prepared, lambda settings: Client())
    assert (result.status, result.answer, result.answer_mode) == ("beantwortet", "echo: Frage?", "echo")
    assert calls == ["shape", "answer", "close"]


def test_after_unregistering_the_key_is_gone(echo_mode):
    modes.unregister("echo")
    assert "echo" not in modes.keys() and modes.parse_modes("a=echo") == {}
    with pytest.raises(ValueError):
        modes.unregister("text")
    with pytest.raises(ValueError):
        modes.register(modes.AnswerMode(key="Bad Key", label="x", title="x", system_prompt=str, answer=None))
