"""Tests for lib/text/numbers.py: figures written in words are shown in digits, other words stay."""
import time

import pytest

from lib.text.numbers import digits_for_words


@pytest.mark.parametrize("text, expected", [
    ("in den letzten acht Wochen vor der Geburt", "in den letzten 8 Wochen vor der Geburt"),
    ("danach zwei Monate, zuletzt fünf Monate", "danach 2 Monate, zuletzt 5 Monate"),
    ("binnen sechs Monaten", "binnen 6 Monaten"),
    ("ab dem sechsten Dienstjahr", "ab dem 6. Dienstjahr"),
    ("bis zum zweiten Geburtstag", "bis zum 2. Geburtstag"),
    ("Im ersten Dienstjahr zwölf Arbeitstage", "Im 1. Dienstjahr 12 Arbeitstage"),
    ("wöchentlich ein Fünftel der Arbeitszeit", "wöchentlich 1/5 der Arbeitszeit"),
    ("nach einem Jahr", "nach 1 Jahr"),
    ("bei vier bis sieben Tagen", "bei 4 bis 7 Tagen"),
])
def test_figures_before_a_unit_become_digits(text, expected):
    assert digits_for_words(text) == expected


@pytest.mark.parametrize("text", [
    "in den ersten beiden Dienstjahren",          # no unit right after the number word
    "eine Frist von drei, ab dem 16. vier",       # elliptic: no unit to read
    "eines Jahres", "acht geben", "Achtung: zehn Minuten", "",
])
def test_other_words_stay(text):
    assert digits_for_words(text) == text


def test_linear_on_hostile_input():
    started = time.perf_counter()
    digits_for_words("ein " * 5000 + "zwei" * 3000)
    assert time.perf_counter() - started < 0.5


@pytest.mark.parametrize("text, expected", [
    ("wöchentlich ein Fünftel der Arbeitszeit", "wöchentlich ein Fünftel (1/5) der Arbeitszeit"),
    ("nach Ablauf von zwei Jahren ab dem Ende", "nach Ablauf von zwei Jahren (2 Jahren) ab dem Ende"),
    ("ab dem sechsten Dienstjahr drei Monate", "ab dem sechsten Dienstjahr (6. Dienstjahr) drei Monate (3 Monate)"),
    ("gebühren zwei Drittel", "gebühren zwei Drittel (2/3)"),
    ("bei acht bis zehn Tagen", "bei acht bis zehn Tagen (8 bis 10 Tagen)"),
    ("in den ersten beiden Dienstjahren", "in den ersten beiden Dienstjahren"),
])
def test_beside_keeps_the_words_and_adds_the_digits(text, expected):
    assert digits_for_words(text, beside=True) == expected
