"""Selection answer mode through the agent, with the stand-in choosing (or botching) passage numbers.

Documented behaviour (lib/answer/selection.py, docs/answers.md): the context's sentences and table rows are
numbered, the model names numbers under a JSON schema whose enum holds exactly those numbers, and the answer
is written in code from the chosen passages, word for word, each with [id] (Stand). Unknown numbers are
dropped; unreadable JSON twice gives the extractive quotes with a reason.
"""
import json
import re

from odoo.tests import tagged
from odoo.tools import mute_logger

from odoo.addons.pv_kb.lib.answer.types import REFUSAL_TEXT

from .common import entry_md
from .test_agent import QUIET, AgentCase

QUESTION = "Wie hoch ist der Freibetrag für Sonderzahlungen?"


def numbers(*keys, refused=False):
    return json.dumps({"verweigert": refused, "saetze": list(keys)})


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_structured")
class TestSelectionAnswers(AgentCase):

    ANSWER_MODE = "selection"

    def numbered_lines(self, request):
        return dict(re.findall(r"^\[(S\d+)\] (.*)$", request["texts"][-1], re.M))

    def test_the_answer_quotes_the_chosen_passages_word_for_word(self):
        result = self.agent._ask(QUESTION)
        self.assertEqual((result.status, result.answer_mode), ("beantwortet", "selection"), result.violations)
        request = self.chat_requests()[-1]
        lines = self.numbered_lines(request)
        enum = request["format_schema"]["properties"]["saetze"]["items"]["enum"]
        self.assertEqual(set(enum), set(lines), "the schema offers exactly the numbered passages")
        self.assertTrue(set(result.cited_ids) <= set(result.retrieved_ids))
        for line in result.answer.split("\n"):
            if not line.strip():
                continue
            match = re.match(r"^(?:⚠ Widerspruch: )?(.*?) \[[^\]]+\] \(Stand \d{4}-\d{2}\)$", line)
            self.assertTrue(match, f"every passage ends with its citation and Stand: {result.answer!r}")
            passage = match.group(1).rstrip(".")
            # a numbered sentence word for word, or a numbered table row with every cell
            self.assertTrue(any(passage == text.rstrip(".") or (text.startswith("|") and all(
                c.strip() in passage for c in text.strip("|").split("|"))) for text in lines.values()),
                (passage, lines))
        self.assertIn("€ 620", result.answer)
        self.assertEqual(result.query.answer_mode, "selection")
        self.assertTrue(result.quotes and all(q["kb_id"] in result.cited_ids for q in result.quotes))

    def test_a_question_that_asks_two_things_is_answered_part_by_part(self):
        asked = "Wie hoch ist der Freibetrag für Sonderzahlungen und wie lange gibt es Entgelt im Krankenstand?"
        result = self.agent._ask(asked)
        requests = self.chat_requests()
        self.assertEqual(len(requests), 2, "one model answer per part")
        questions = [re.search(r"<frage>\s*(.*?)\s*</frage>", r["texts"][-1], re.S).group(1) for r in requests]
        self.assertEqual(questions, ["Wie hoch ist der Freibetrag für Sonderzahlungen?",
                                     "Wie lange gibt es Entgelt im Krankenstand?"])
        self.assertEqual(result.status, "beantwortet", result.violations)
        first = result.answer.index("**Wie hoch ist der Freibetrag für Sonderzahlungen?**")
        second = result.answer.index("**Wie lange gibt es Entgelt im Krankenstand?**")
        self.assertLess(first, result.answer.index("€ 620"))
        self.assertLess(second, result.answer.index("Wochen"))
        self.assertTrue({"lb-sz-01", "lb-efz-01"} <= set(result.cited_ids))
        self.assertTrue(set(result.cited_ids) <= set(result.retrieved_ids))
        self.assertEqual(result.query.question, asked)

    def test_a_table_row_is_quoted_with_its_header(self):
        self.agent._ask(QUESTION)   # only to read the numbered context of this base
        lines = self.numbered_lines(self.chat_requests()[-1])
        row = next(k for k, v in lines.items() if v.startswith("|"))
        self.standin.script_chat([numbers(row)])
        result = self.agent._ask(QUESTION)
        cells = [c.strip() for c in lines[row].strip("|").split("|")]
        self.assertEqual(result.status, "beantwortet")
        self.assertTrue(result.answer.startswith(cells[0] + ":"), (result.answer, cells))
        self.assertTrue(all(c in result.answer for c in cells if c), "every cell of the row is shown")

    @mute_logger(*QUIET)
    def test_unknown_numbers_are_dropped_and_nothing_left_is_a_refusal(self):
        self.standin.script_chat([numbers("S999"), numbers(refused=True)])
        result = self.agent._ask(QUESTION)
        self.assertEqual((result.status, result.answer), ("verweigert", REFUSAL_TEXT))
        self.assertIn("dropped: unknown_passage: S999", result.violations)
        self.assertEqual(len(self.chat_requests()), 2, "a valid JSON answer is not asked for again, only looked "
                                                       "at again over the best entries after the refusal")

    def test_a_refusal_is_the_refusal_sentence(self):
        self.standin.script_chat([numbers(refused=True), numbers(refused=True)])
        result = self.agent._ask(QUESTION)
        self.assertEqual((result.status, result.answer, result.cited_ids), ("verweigert", REFUSAL_TEXT, []))
        self.assertIn("second_look: refused again", result.violations)

    def test_after_a_refusal_the_model_looks_again_at_the_best_two_entries(self):
        self.agent._ask(QUESTION)
        full = self.chat_requests()[-1]["texts"][-1]
        self.standin.script_chat([numbers(refused=True), numbers("S1")])
        result = self.agent._ask(QUESTION)
        first, second = (r["texts"][-1] for r in self.chat_requests()[-2:])
        entries = lambda text: re.findall(r"^### \[([^\]]+)\]", text, re.M)
        self.assertEqual(first, full, "the first request is the usual one")
        distinct = list(dict.fromkeys(entries(first)))
        self.assertGreater(len(distinct), 2)
        self.assertEqual(list(dict.fromkeys(entries(second))), distinct[:2], "only the best two entries, in order")
        self.assertIn("Umgangssprache", second)
        self.assertEqual(result.status, "beantwortet", result.violations)
        self.assertIn("repaired: second_look: S1", result.violations)
        line = self.numbered_lines(self.chat_requests()[-1])["S1"]
        self.assertTrue(result.answer.startswith(line.split(" [")[0][:30]) or line.startswith("|"), result.answer)
        self.assertTrue(set(result.cited_ids) <= set(result.retrieved_ids) and result.cited_ids)

    def test_the_second_look_names_the_bases_words_for_the_users_words(self):
        self.standin.script_chat([numbers(refused=True), numbers("S1")])
        self.agent._ask("Wie viel vom Weihnachtsgeld bleibt steuerfrei?")
        first, second = (r["texts"][-1] for r in self.chat_requests()[-2:])
        self.assertIn("In der Wissensbasis heißt „Weihnachtsgeld“: Sonderzahlung", second)
        self.assertNotIn("In der Wissensbasis heißt", first, "the first look is the usual request")

    @mute_logger(*QUIET)
    def test_invalid_json_twice_gives_the_quotes_with_a_reason_never_the_text(self):
        self.standin.script_chat(["Der Freibetrag beträgt € 999 [lb-sz-01].", "{kaputt"])
        result = self.agent._ask(QUESTION)
        self.assertEqual((len(self.chat_requests()), result.regenerations), (2, 1))
        self.assertEqual(result.status, "unsicher")
        self.assertTrue(result.answer.startswith("**Ohne KI-Antwort:**"), result.answer)
        self.assertNotIn("999", result.answer)
        self.assertIn("€ 999", result.query.rejected_answer, "the rejected text stays in the log for the curator")

    def test_invalid_json_then_valid_numbers_are_accepted(self):
        self.agent._ask(QUESTION)
        first = sorted(self.numbered_lines(self.chat_requests()[-1]), key=lambda k: int(k[1:]))[0]
        self.standin.script_chat(["kein JSON", numbers(first)])
        result = self.agent._ask(QUESTION)
        self.assertEqual((result.status, result.regenerations), ("beantwortet", 1))

    def test_a_bundesland_no_chosen_passage_names_is_a_refusal_that_shows_the_passages(self):
        result = self.agent._ask("Wie hoch ist der Freibetrag für Sonderzahlungen in Salzburg?")
        self.assertEqual(result.status, "verweigert", result.violations)
        self.assertTrue(result.answer.startswith("Für Salzburg enthält die Wissensbasis keinen eigenen Wert"),
                        result.answer)
        self.assertIn("refused: asked_scope_missing: land: Salzburg", result.violations)
        self.assertTrue(result.cited_ids and set(result.cited_ids) <= set(result.retrieved_ids), result.answer)

    def test_conflict_sides_are_all_shown_with_the_warning_sign(self):
        result = self.agent._ask("Wie hoch ist die Ersatzquote bei Blockzeit in der Altersteilzeit?")
        self.assertEqual(result.status, "beantwortet", result.violations)
        self.assertIn("⚠", result.answer)
        self.assertTrue({"lb-atz-01", "wiku-atz-02"} <= set(result.cited_ids), result.answer)
        self.assertIn("27,5 %", result.answer)
        self.assertIn("28,5 %", result.answer)

    def test_the_panel_gets_the_written_answer_never_the_json(self):
        events = []
        result = self.agent._ask(QUESTION, on_delta=events.append)
        shown = [e for e in events if e]
        self.assertEqual(shown, [result.answer])
        self.assertNotIn("saetze", "".join(shown))

    def test_an_institution_named_without_an_amount_gets_what_the_base_says_not_a_neighbouring_value(self):
        self.load_entries({"lb-efz-02": entry_md(
            "lb-efz-02", title="Entgeltfortzahlung bei Arbeitsunfall", topic="entgeltfortzahlung", stand="2024-01",
            summary="Nach einem Arbeitsunfall gebührt das volle Entgelt für 8 Wochen je Anlassfall.",
            payroll="Kleinere Arbeitgeber mit bis zu 50 Dienstnehmern können bei der AUVA einen Zuschuss zur "
                    "Entgeltfortzahlung beantragen; Höhe und Wartezeiten sind vorher zu prüfen.",
            kernwerte="| Dienstzeit | volles Entgelt |\n|---|---|\n| bis 15 Dienstjahre | 8 Wochen |")}, "efz")
        asked = "Wie viel Prozent des Entgelts ersetzt uns die AUVA als Zuschuss nach einem Arbeitsunfall?"
        self.agent._ask(asked)
        lines = self.chat_requests()[-1]["texts"][-1].splitlines()
        weeks = next(re.match(r"^\[(S\d+)\]", line).group(1) for line in lines
                     if re.match(r"^\[S\d+\]", line) and "8 Wochen" in line)
        self.standin.script_chat([numbers(weeks)])
        result = self.agent._ask(asked)
        self.assertEqual(result.status, "verweigert", result.violations)
        self.assertTrue(result.answer.startswith("Einen Betrag oder Satz für „AUVA“ enthält die Wissensbasis nicht"),
                        result.answer)
        self.assertIn("Höhe und Wartezeiten sind vorher zu prüfen", result.answer)
        self.assertNotIn("8 Wochen", result.answer)
        self.assertEqual(result.cited_ids, ["lb-efz-02"])
        self.assertIn("refused: unvalued_institution: AUVA", result.violations)

    def test_passages_of_entries_that_do_not_name_the_asked_subject_are_no_answer(self):
        # "Altersteilzeit" is a word of the base (lb-atz-01), not of the Entgeltfortzahlung the model picks from
        asked = "Altersteilzeit: wie lange bekommt der Arbeitnehmer bei Krankheit das Entgelt?"
        self.agent._ask(asked)
        entry_of, current = {}, None
        for line in self.chat_requests()[-1]["texts"][-1].splitlines():
            heading = re.match(r"^### \[([^\]]+)\]", line)
            current = heading.group(1) if heading else current
            key = re.match(r"^\[(S\d+)\]", line)
            if key and current:
                entry_of[key.group(1)] = current
        neighbour = next(k for k, e in entry_of.items() if e == "lb-efz-01")
        self.standin.script_chat([numbers(neighbour)])
        result = self.agent._ask(asked)
        self.assertEqual((result.status, result.answer, result.cited_ids),
                         ("verweigert", "Zu „Altersteilzeit“ enthält die Wissensbasis keine Aussage.", []),
                         result.violations)
        self.assertIn("refused: unaddressed_subject: Altersteilzeit", result.violations)
        # a passage of the entry that names it is no such refusal
        own = next(k for k, e in entry_of.items() if e == "lb-atz-01")
        self.standin.script_chat([numbers(own), numbers(own)])
        again = self.agent._ask(asked)
        self.assertFalse([v for v in again.violations if "unaddressed_subject" in v], again.violations)
