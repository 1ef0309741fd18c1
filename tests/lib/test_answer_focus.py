"""Question-focused cutting of a context block (lib/answer/focus.py) and its use in the prompt."""
from lib.answer import focus, prompt
from lib.answer.types import ContextBlock

TABLE = """Einleitender Satz über die Pauschale ohne Bezug.
| Strecke | kleines PP | großes PP |
|---|---|---|
| 2 bis 20 km | – | € 31 |
| 20 bis 40 km | € 58 | € 123 |
| 40 bis 60 km | € 113 | € 214 |
| über 60 km | € 168 | € 306 |
Ein Schlusssatz, der nichts zur Frage sagt, aber lang genug ist, um Platz zu kosten."""


def test_the_asked_row_is_kept_with_its_table_header_and_gaps_are_marked():
    out = focus.focus_text(TABLE, "Großes Pendlerpauschale über 60 km im Monat?", 150)
    lines = out.split("\n")
    assert "| über 60 km | € 168 | € 306 |" in lines
    # the table's header and separator come first, so the kept rows keep their column names
    assert lines.index("| Strecke | kleines PP | großes PP |") + 1 == lines.index("|---|---|---|")
    assert lines.index("|---|---|---|") < lines.index("| über 60 km | € 168 | € 306 |")
    assert "| 2 bis 20 km | – | € 31 |" not in lines and focus.GAP in lines
    assert len(out) <= 150


def test_numbers_of_the_question_pick_the_sentence_among_long_prose():
    prose = ("Das Gesetz gewährt für jedes Arbeitsjahr einen Urlaub von 30 Werktagen, das sind fünf Wochen, und "
             "zwar für alle Beschäftigten gleich. Nach Vollendung des 25. Dienstjahres erhöht sich der Anspruch auf "
             "36 Werktage. In den ersten sechs Monaten entsteht der Anspruch aliquot nach der Dauer der Beschäftigung.")
    out = focus.focus_text(prose, "Urlaub nach dem 25. Dienstjahr?", 110)
    assert "36 Werktage" in out and "aliquot" not in out


def test_nothing_related_gives_empty_so_the_head_cut_applies():
    assert focus.focus_text(TABLE, "Wie hoch ist das Taggeld?", 100) == ""
    assert focus.focus_text(TABLE, "", 100) == ""
    assert focus.focus_text(TABLE, "Pendlerpauschale", 0) == ""


def test_term_hits_match_word_forms_and_stopwords_do_not_count():
    terms = focus.question_terms("Welche Höchstbeitragsgrundlagen gelten für die Sonderzahlungen?")
    assert focus.term_hits(terms, "Höchstbeitragsgrundlage für Sonderzahlung jährlich") == 2
    assert focus.term_hits(terms, "Welche gelten für die") == 0


def _block(entry, text, score):
    return ContextBlock(entry_id=entry, title="T", stand="2025-01", topic="x", source="s", heading_path="A",
                        text=text, section_key="a", score=score)


def test_build_messages_keeps_the_asked_row_of_a_block_too_long_for_the_window_and_the_next_block():
    filler = "\n".join(f"| Zeile {n} | € {n} |" for n in range(40))
    table = "| Wert | 2025 |\n|---|---|\n" + filler + "\n| Höchstbeitragsgrundlage monatlich | € 6.450 |"
    blocks = [_block("lb-sv-01", table, 0.9), _block("lb-sv-02", "Kurzer zweiter Block zur Höchstbeitragsgrundlage.", 0.5)]
    content = prompt.build_messages("Höchstbeitragsgrundlage monatlich 2025?", blocks, max_context_chars=500)[-1]["content"]
    assert "| Höchstbeitragsgrundlage monatlich | € 6.450 |" in content and "| Wert | 2025 |" in content
    assert "Kurzer zweiter Block" in content
    # without the question (render_context) the head is kept, as before
    head = prompt.render_context(blocks, max_chars=500)
    assert "€ 6.450" not in head and "| Zeile 0 | € 0 |" in head

