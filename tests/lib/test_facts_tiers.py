"""Tests for staged tables (lib/facts/tiers.py): the range a row label names, the number a question names, and the
row a value question falls into."""
from decimal import Decimal

import pytest

from lib.facts.tiers import (Tier, column_tiers, holds, is_dimension_word, question_points, service_years, staged,
                             tier_of)

D = Decimal


def test_row_labels_name_ranges_of_service_years_or_kilometres():
    assert tier_of("1. Dienstjahr") == Tier("jahr", D(1), D(1))
    assert tier_of("ab dem 2. Dienstjahr") == Tier("jahr", D(2), None)
    assert tier_of("ab dem 16. Dienstjahr (nach 15 Jahren)") == Tier("jahr", D(16), None)
    assert tier_of("nach 15 Jahren") == Tier("jahr", D(16), None), "a count of completed years: the next year on"
    assert tier_of("bis 15 Dienstjahre") == Tier("jahr", None, D(15))
    assert tier_of("2. bis 5. Dienstjahr") == Tier("jahr", D(2), D(5))
    assert tier_of("20 bis 40 km") == Tier("km", D(20), D(40))
    assert tier_of("über 60 km").low > D(60) and tier_of("über 60 km").high is None
    assert tier_of("unter 20 km").high < D(20)
    # no dimension, or calendar years: no tier
    for label in ("Regelsatz", "ab 2025", "Dienstjahre ab 2024", "Höchstbetrag € 1 Mio."):
        assert tier_of(label) is None, label


def test_income_bands_name_ranges_of_euros():
    assert tier_of("über € 103.072 bis € 1.000.000") == Tier("eur", D("103072.01"), D(1000000))
    assert tier_of("bis € 2.074") == Tier("eur", None, D(2074))
    assert tier_of("über € 1.000.000") == Tier("eur", D("1000000.01"), None)
    # the 2024 tariff names upper bounds only: each band starts above the one below it
    rows = column_tiers(["bis € 12.816", "bis € 20.818", "bis € 1.000.000"])
    assert rows == [Tier("eur", None, D(12816)), Tier("eur", D("12816.01"), D(20818)),
                    Tier("eur", D("20818.01"), D(1000000))]
    # shares of a running sum are no bands a single amount falls into
    shares = column_tiers(["die ersten € 620", "die nächsten € 24.380 (bis € 25.000)", "über € 83.333"])
    assert shares == [None, None, None]


def test_an_income_a_question_tells_falls_into_one_band():
    points = question_points("Welchen Grenzsteuersatz hat jemand mit € 50.000 Jahreseinkommen im Jahr 2025?")
    assert points == {"eur": (D(50000),)}
    assert holds(Tier("eur", D("35836.01"), D(69166)), points) is True
    assert holds(Tier("eur", D("69166.01"), D(103072)), points) is False
    assert question_points("Einkommen von rund 20.000 Euro") == {"eur": (D(20000),)}
    assert question_points("Monatsbezug € 2.300,50") == {"eur": (D("2300.50"),)}
    assert question_points("€ 30.000 oder € 60.000?") == {}, "two amounts: two cases"


def test_open_ends_of_a_staged_column_are_closed_by_the_next_row():
    rows = staged([tier_of("1. Dienstjahr"), tier_of("ab dem 2. Dienstjahr"), tier_of("ab dem 16. Dienstjahr"),
                   None, tier_of("ab dem 26. Dienstjahr")])
    assert rows[1] == Tier("jahr", D(2), D(15)) and rows[2] == Tier("jahr", D(16), D(25))
    assert rows[3] is None and rows[4] == Tier("jahr", D(26), None)


def test_the_number_a_question_names_with_its_readings():
    assert question_points("Kündigungsfrist im 4. Dienstjahr?") == {"jahr": (D(4),)}
    assert question_points("Urlaub nach dem 25. Dienstjahr") == {"jahr": (D(26),)}
    assert question_points("im ersten Dienstjahr krank") == {"jahr": (D(1),)}
    assert question_points("DN ab dem 26. DJ: wie viel Urlaub?") == {"jahr": (D(26),)}, "DJ: Dienstjahr"
    assert question_points("DN seit 17 Jahren im Betrieb") == {"jahr": (D(17), D(18))}, "completed years: two readings"
    assert question_points("seit sechseinhalb Jahren bei uns") == question_points("seit 6,5 Jahren bei uns") \
        == {"jahr": (D("6.5"), D("7.5"))}, "a half written as a word"
    assert question_points("bei 25 km einfacher Strecke") == {"km": (D(25),)}
    assert question_points("über 60 km")["km"][0] > D(60)
    # calendar years are no service years; two different numbers of one dimension are two cases
    assert question_points("Jahreseinkommen 2025 über 30.000") == {}
    assert question_points("2025 Jahre") == {}
    assert question_points("5 Jahre oder 20 Jahre?") == {}


def test_a_question_falls_into_a_row_only_when_every_reading_does():
    second_to_fifteenth = Tier("jahr", D(2), D(15))
    assert holds(second_to_fifteenth, question_points("seit 10 Jahren")) is True
    assert holds(second_to_fifteenth, question_points("seit 15 Jahren")) is False, "the 15th or the 16th year"
    assert holds(second_to_fifteenth, question_points("bei 25 km")) is None, "no number of that dimension"
    assert is_dimension_word("dienstjahr") and is_dimension_word("jahr") and is_dimension_word("km")
    assert not is_dimension_word("jahreseinkomm")


def test_rows_of_persons_by_age_and_the_age_a_question_names():
    under, adult = tier_of("Familienbonus Plus, Kind unter 18"), tier_of("Familienbonus Plus, Kind ab 18 mit Familienbeihilfe")
    assert under == Tier("alter", None, D(17)) and adult == Tier("alter", D(18), None)
    # a count of children, a calendar year, a year of service: no age
    for label in ("Alleinverdienerabsetzbetrag, 1 Kind", "Kinderbetreuung ab 2025", "Altersteilzeit ab 2026"):
        assert tier_of(label) is None, label
    assert tier_of("Kind, ab dem 3. Dienstjahr").unit == "jahr"
    for question, age in (("Familienbonus für meine 10-jährige Tochter?", 10), ("für ein zehnjähriges Kind", 10),
                          ("Sohn (12), wie viel Familienbonus?", 12), ("Kind über 18 mit Familienbeihilfe", 19),
                          ("Kind unter 18 Jahren", 17)):
        assert question_points(question)["alter"] == (D(age),), question
    # "12 Jahre alt" is an age, not twelve years of service; a jubilee and a colleague's age name no child's age
    assert question_points("Kind 12 Jahre alt, Mutter seit 3 Jahren bei uns") == {
        "alter": (D(12),), "jahr": (D(3), D(4))}
    assert question_points("Jubiläumsgeld zum 25-jährigen Dienstjubiläum") == {}
    assert holds(under, question_points("10-jähriges Kind")) and holds(adult, question_points("10-jähriges Kind")) is False
    assert is_dimension_word("jaehrig") and is_dimension_word("zehnjaehrig") and not is_dimension_word("gehalt")


def test_a_length_of_service_in_months_is_within_its_year():
    from lib.facts.tiers import question_points
    assert question_points("Ein Lagerarbeiter ist seit vier Monaten bei uns und krank.") == {"jahr": (Decimal(1),)}
    assert question_points("Sie ist seit 14 Monaten im Betrieb beschäftigt.") == {"jahr": (Decimal(2),)}
    # months of sick leave are no length of service
    assert question_points("Er ist seit einem Monat krank.") == {}


@pytest.mark.parametrize("question, points", [
    # start and a later month known: the year of service exactly (24 years 4 months: the 25th)
    ("Eintritt im Mai 2000, gekündigt zum 30. September 2024", (D(25),)),
    ("Angestellter, Eintritt 1. 4. 2018, soll im Oktober 2024 gekündigt werden", (D(7),)),
    # years only: the one or the next
    ("Ein Angestellter mit Eintritt 2001 wird 2024 gekündigt.", (D(23), D(24))),
    ("Wir kündigen einen Angestellten, der seit März 2002 bei uns ist, im Herbst 2024.", (D(22), D(23))),
])
def test_the_year_of_service_is_reckoned_from_the_start_told_as_a_date(question, points):
    assert question_points(question) == {"jahr": points}


def test_the_start_is_read_as_written_and_folded():
    from lib.facts.tiers import service_start, service_years
    assert service_years("Eintritt im März 2002, gekündigt im Oktober 2024") == (D(23),)
    assert service_years("eintritt im maerz 2002, gekuendigt im oktober 2024") == (D(23),)
    assert service_start("Eintritt im März 2002, gekündigt im Oktober 2024") == 2002
    assert service_start("Seit 2023 gilt der höhere Wert – wie hoch ist er 2025?") is None


def test_a_date_that_starts_no_employment_is_no_length_of_service():
    assert question_points("Seit 2023 gilt der höhere Wert – wie hoch ist er 2025?") == {}
    assert question_points("Eintritt 2024") == {}         # no later year told
    # a length of service told in words wins over the dates
    assert question_points("Eintritt 2001, 2024 nach 23 Dienstjahren gekündigt") == {"jahr": (D(23), D(24))}


def test_the_start_of_employment_told_with_the_date_before_its_verb():
    assert service_years("Unsere Angestellte ist am 1. März 2014 eingetreten, wir kündigen sie im Juni 2025.") == (
        Decimal(12),)
    assert service_years("Er hat im Mai 2000 bei uns angefangen und geht im Mai 2025.") == (Decimal(26),)
    assert service_years("Am 1. März 2014 wurde das Gesetz geändert, 2025 …") is None, "no start of employment"
