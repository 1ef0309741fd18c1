"""Links in answers: only addresses of the cited blocks stay (lib/answer/links.py)."""
import pytest

from lib.answer import links

BLOCK = ("Antrag beim AMS online: https://www.ams.at/unternehmen/altersteilzeit. Formular siehe "
         "[Formular](https://www.ams.at/formular.pdf) und <https://ris.bka.gv.at/GeltendeFassung.wxe?Abfrage=Bundesnormen>.")


@pytest.mark.parametrize("answer, expected, dropped", [
    ("Siehe [hier](https://evil.example/phish) [lb-atz-07].", "Siehe hier [lb-atz-07].", ["https://evil.example/phish"]),
    ("Bild ![x](https://evil.example/t.png) [lb-atz-07]", "Bild x [lb-atz-07]", ["https://evil.example/t.png"]),
    ("Mehr unter https://evil.example/a?b=c. [lb-atz-07]", "Mehr unter . [lb-atz-07]", ["https://evil.example/a?b=c"]),
    ("Mehr: <https://evil.example> [lb-atz-07]", "Mehr: [lb-atz-07]", ["https://evil.example"]),
    ("www.evil.example/x ist gut [lb-atz-07]", " ist gut [lb-atz-07]", ["www.evil.example/x"]),
    ("[Klick](javascript:alert(1)) [lb-atz-07]", None, None),
    ("[AMS](https://evil.example/https://www.ams.at/unternehmen/altersteilzeit)", "AMS",
     ["https://evil.example/https://www.ams.at/unternehmen/altersteilzeit"]),
])
def test_foreign_links_are_dropped(answer, expected, dropped):
    text, gone = links.keep_cited_links(answer, [BLOCK])
    assert gone
    assert "evil" not in text and "javascript" not in text
    if expected is not None:
        assert text == expected and gone == dropped


@pytest.mark.parametrize("answer", [
    "Antrag online: https://www.ams.at/unternehmen/altersteilzeit [lb-atz-07].",
    "Das [Formular](https://www.ams.at/formular.pdf) [lb-atz-07]",
    "Fassung: <https://ris.bka.gv.at/GeltendeFassung.wxe?Abfrage=Bundesnormen> [lb-atz-07]",
    "Siehe [AMS](http://WWW.ams.at/unternehmen/altersteilzeit/) [lb-atz-07]",
    "Ohne Link [lb-atz-07]: 28,5 % (Stand 2026-01).",
])
def test_links_of_the_cited_blocks_stay(answer):
    assert links.keep_cited_links(answer, [BLOCK]) == (answer, [])


def test_without_cited_blocks_every_link_goes():
    text, gone = links.keep_cited_links("https://www.ams.at/unternehmen/altersteilzeit", [])
    assert text == "" and gone == ["https://www.ams.at/unternehmen/altersteilzeit"]


def test_a_long_hostile_answer_is_linear():
    import time
    answer = "[a](" * 20000 + "https://evil.example " * 5000 + "<" * 20000
    started = time.perf_counter()
    text, gone = links.keep_cited_links(answer, [BLOCK])
    assert time.perf_counter() - started < 5.0      # linear: ~0.2 s; a quadratic pass would take minutes
    assert "evil" not in text
