"""Tests for lib.freetext: echoes, claims, citation repair, context budget."""
from lib.answer import freetext as f
from lib.answer.types import ContextBlock


def block(entry_id, text, stand="2026-01"):
    return ContextBlock(entry_id=entry_id, title="T " + entry_id, stand=stand, topic="t", source="s",
                        heading_path="h", text=text, section_key="kernwerte")


BLOCKS = [block("lb-sz-01", "Der Freibetrag beträgt € 620; Steuersatz 6 % nach § 67 Abs. 1 EStG."),
          block("lb-gfb-01", "Die Geringfügigkeitsgrenze 2025 beträgt € 551,10 monatlich.", "2025-01"),
          block("lb-x-01", "Auch hier: 6 % Zuschlag.")]


def test_echoed_instructions_and_tags_are_found_and_removed():
    answer = ("Antwortformat (Markdown):\n- Jeder Satz mit [id], jeder Wert mit (Stand JJJJ-MM).\n\n"
              "Der Freibetrag beträgt € 620 [lb-sz-01] (Stand 2026-01). </wissensbasis>\n\n<frage>")
    found = f.echo_fragments(answer)
    assert any("Antwortformat" in x for x in found) and "</wissensbasis>" in found
    cleaned = f.strip_echo(answer)
    assert cleaned == "Der Freibetrag beträgt € 620 [lb-sz-01] (Stand 2026-01)."
    assert f.echo_fragments("Der Freibetrag beträgt € 620 [lb-sz-01] (Stand 2026-01).") == []


def test_claims_are_values_dates_and_legal_references():
    assert f.is_claim("Der Freibetrag beträgt € 620.")
    assert f.is_claim("Das regelt § 67 EStG.")
    assert f.is_claim("Die Frist endet am 15. Jänner.")
    assert not f.is_claim("Gerne helfe ich Ihnen weiter.")
    assert not f.is_claim("Die Wissensbasis beschreibt das im Eintrag [lb-sz-01].")
    assert f.has_claims("Hallo.\n\n| Grenze | € 551,10 |") and not f.has_claims("Hallo. Bitte prüfen.")


def test_a_claim_gets_a_citation_only_from_exactly_one_matching_entry():
    text, repairs = f.repair_citations("Die Grenze beträgt € 551,10. Gerne helfe ich weiter.", BLOCKS)
    assert text == "Die Grenze beträgt € 551,10 [lb-gfb-01] (Stand 2025-01). Gerne helfe ich weiter."
    assert [r.entry_id for r in repairs] == ["lb-gfb-01"] and str(repairs[0]).startswith("repaired:")
    # 6 % stands in two entries: ambiguous, nothing attached
    text, repairs = f.repair_citations("Der Satz beträgt 6 %.", BLOCKS)
    assert repairs == [] and "[" not in text
    # a value in no entry: nothing attached (the validator reports it)
    assert f.repair_citations("Es sind € 999.", BLOCKS)[1] == []
    # a paragraph that already cites is left alone
    same = "Es sind € 551,10 [lb-sz-01]."
    assert f.repair_citations(same, BLOCKS) == (same, [])
    # the citation in the next paragraph (seen with Qwen2.5-Coder-1.5B): the value stands in two entries,
    # but only one of them is cited by the answer
    blocks = BLOCKS + [block("wiku-gfb-02", "Grenze 2025: € 551,10.", "2025-01")]
    text, repairs = f.repair_citations("Die Grenze beträgt € 551,10.\n\n[lb-gfb-01] (Stand 2025-01) nennt € 551,10.",
                                       blocks)
    assert [r.entry_id for r in repairs] == ["lb-gfb-01"]
    assert f.repair_citations("Die Grenze beträgt € 551,10.", blocks)[1] == []     # nothing cited: ambiguous
    # legal reference only
    text, repairs = f.repair_citations("Das steht in § 67 EStG.", BLOCKS)
    assert [r.entry_id for r in repairs] == ["lb-sz-01"]


def test_small_context_windows_get_fewer_shorter_blocks():
    small_blocks, small_chars = f.context_budget(2048, fixed_chars=2000)
    big_blocks, big_chars = f.context_budget(8192, fixed_chars=2000)
    assert big_chars == 24000       # the fixed limit of large windows
    assert f.context_budget(4096, fixed_chars=2000) == (6, int((4096 - 700) * 3.5) - 2000)
    assert small_blocks == 4 and big_blocks == 24
    assert small_chars == int((2048 - 700) * 3.5) - 2000
    assert big_chars > small_chars
    assert f.context_budget(512, fixed_chars=50000)[1] == 1200
