"""A commanded statement is declined (lib/answer/respond.decline_command): a refusal, with what the base says."""
from lib.answer import respond
from lib.answer.types import AgentAnswer


def test_an_answer_with_citations_follows_the_refusal():
    result = AgentAnswer(status="beantwortet", answer="Kilometergeld Pkw: € 0,50 [lb-rk-02] (Stand 2025-01)")
    result.cited_ids = ["lb-rk-02"]
    respond.decline_command(result)
    assert result.status == "verweigert" and result.notice == respond.COMMAND_NOTICE
    assert result.answer.startswith(respond.COMMAND_DECLINED)
    assert result.answer.endswith("€ 0,50 [lb-rk-02] (Stand 2025-01)")
    assert result.cited_ids == ["lb-rk-02"]


def test_a_refusal_or_an_answer_without_citations_becomes_the_refusal_alone():
    for status, cited in (("verweigert", []), ("beantwortet", [])):
        result = AgentAnswer(status=status, answer="Dazu enthält die Wissensbasis keine Aussage.")
        result.cited_ids = cited
        respond.decline_command(result)
        assert result.answer == respond.COMMAND_DECLINED and result.status == "verweigert"
        assert result.cited_ids == []
