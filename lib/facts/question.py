"""Value questions, parsed: the words a question names (with their alternatives from the synonym table), the
period, basis and bounds it asks for, the kind of value it wants. The lookup (lookup.py) matches them against the
facts. Pure and fast.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from ..search.fulltext import is_value_question
from ..text.numbers import CARDINALS, digits_for_words
from ..text.german import ANSWER_STOPWORDS, QUESTION_STOPWORDS, fold_plain, light_stem, word_tokens
from .concepts import GENERIC, bases_of, basis_of, stems, strip_basis
from .case import (EMPLOYEE_NOTICE, EMPLOYER_NOTICE, EMPLOYER_NOTICE_WORD, NOTICE_WORDS, STATED_PAY,
                   case_words)
from .phrasing import implied_key_words, in_the_rows_words
from .tiers import question_points, service_start
from .periods import Period, find_period


MAX_WORDS_SHORT = 6        # a question this short (in words) counts as a value question when a fact matches it
_NOT_VALUE = re.compile(r"\b(?:warum|wieso|weshalb|erkl[äa]r\w*|unterschied\w*|berechn\w*|beispiel\w*|"
                        r"funktionier\w*|ablauf)\b", re.I)
# "Mit welchem Prozentsatz … wird … berechnet?" asks for the rate, not how it is computed
_RATE_WITH = re.compile(r"\bmit\s+welche[mr]\s+(?:\w+\s+)?\w*satz\b", re.I)
# a modal verb asks whether something is allowed or required ("Muss der DG das volle Gehalt zahlen?"), unless the
# question asks for a figure in so many words ("Wie viel Taggeld darf ich steuerfrei auszahlen?", "Bis wann muss
# die Jahreserklärung abgegeben werden?")
_MODAL = re.compile(r"\b(?:muss|müssen|darf|dürfen|kann|können|soll)\b", re.I)
# "ab welcher (monatlichen) Lohnsumme", "ab welchem Einkommen": the threshold of a row ("Grenze für …")
_SUM_WORDS = r"(?:\w*summen?|\w*betrag|\w*einkommen|entgelt\w*|\w*bezug|\w*lohn|gehalt)\b"
_ASKS_THRESHOLD = re.compile(r"\bab\s+welche[mrn]?\s+(?:\w+en\s+)?" + _SUM_WORDS, re.I)
_THRESHOLD_KEY_WORDS = frozenset({light_stem(fold_plain("Grenze"))})
_SEVERAL = re.compile(r"\bmehrere[nrms]?\b", re.I)
_SUM_OF = re.compile(r"\b\w*(?:summen?|betrag)\s+(?:ihrer|seiner|aller|der|deren)\s+(?:\w+en\s+)?\w+", re.I)
# asks both lists below share: when a rule starts ("Ab welchem Monat (des Dienstverhältnisses) …?", "ab dem
# wievielten Tag"), a span counted ("nach wie vielen Jahren"), where a limit lay ("wo lag damals die Grenze")
_FROM_WHICH_MONTH = r"\b(?:seit|ab)\s+(?:welchem|dem\s+wievielten)\s+(?:Monat|Tag|Dienstjahr)\b"
_SHARED_ASKS = _FROM_WHICH_MONTH + r"|\bnach\s+wie\s*viel\w*\b|\bwo\s+(?:lag|liegt|lagen|liegen)\b"
# … and a value per unit asked with "was" ("Was darf ich pro Nacht steuerfrei auszahlen?"), a span ("Nach wie langer
# Zeit verjährt …?"), a rate asked with "mit welchem" ("Mit welchem festen Steuersatz wird … versteuert?")
_SHARED_ASKS += (r"|\bwas\b[^?.]{0,80}?\b(?:pro|je)\s+(?:nacht|nächtigung|kilometer|km|stunde|quadratmeter|m²)\b"
                 r"|\bnach\s+wie\s+lange[rn]?\s+zeit\b|\bmit\s+welche[mr]\s+(?:\w+\s+)?\w*satz\b")
_ASKS_FIGURE = re.compile(
    _SHARED_ASKS + r"|\bwie\s*(?:hoch|viel\w*|lange?)\b|\bbis\s+wann\b|\bab\s+wann\b|\bbinnen\s+wie\b"
    r"|\bbis\s+zu\s+welche[mrns]?\b"
    r"|\b(?:seit|ab)\s+(?:wann|welchem\s+(?:Kalender)?jahr)\b|\bab\s+welche[mrn]?\s+(?:\w+en\s+)?" + _SUM_WORDS +
    r"|\bwelche[mrns]?\s+(?:\w+\s+)?(?:betrag|h[öo]he|\w*frist|\w*satz|grenze|grenzwert)\b|\bin\s+welcher\s+h[öo]he\b"
    r"|\bin\s+welche[mn]\s+(?:rahmen|ausma(?:ß|ss)|umfang)\b",
    re.I)
# value asks the search's word list does not hold ("Bis zu welchem Jahreseinkommen …", "Welches Kilometergeld galt
# 2023 …", "binnen wie vielen Tagen", "Welches Pendlerpauschale tragen wir ein?")
_ASKS_VALUE = re.compile(_SHARED_ASKS + r"|\bbis\s+zu\s+welche[mrns]?\b|\bbinnen\s+wie\b"
                         r"|\b(?:seit|ab)\s+welchem\s+(?:Kalender)?jahr\b"
                         r"|\bwelche[mrns]?\s+\w+\s+(?:gilt|galt|gelten|galten)\b"
                         r"|\bwelche[mrns]?\s+\w*(?:pauschale|betrag|satz|zuschlag|geld)\s+(?:steht|stehen)\b"
                         # "welches Taggeld ist steuerfrei", "welcher Satz pro Kilometer"
                         r"|\bwelche[mrns]?\s+[\w-]*(?:pauschale|betrag|satz|zuschlag|geld)\b[^?.]{0,40}?\b(?:ist|sind|bleibt"
                         r"|bleiben|war|waren)\b[^?.]{0,30}?\w*(?:steuer|abgaben|beitrags)frei\b"
                         r"|\bwelche[mrns]?\s+\w*satz\s+(?:pro|je)\s+\w"
                         r"|\bwelche[mrns]?\s+\w*(?:pauschale|zuschlag|geld)\s+(?:\w+\s+){0,3}(?:trag|setz|rechne|"
                         r"berücksichtig|gewähr|verrechne|zahl|bekomm|krieg)\w*\b", re.I)
_ASK_WORDS = frozenset(light_stem(fold_plain(w)) for w in """
wie hoch viel viele wieviel wieviele welche welcher welches beträgt betragen gilt gelten galt aktuell
derzeit momentan heuer genau bitte nennen nenn sag sagen gibt geben steht bekomme bekommt zahlt zahlen
man ich wir den dem der die das des ein eine einen einem für fürs pro je im in ab bis seit nach von vom
zum zur bei beim mit und oder ist sind war wird werden liegt lag höhe betrag wert werte amtlich amtliche
gesetzlich offiziell amtl welchem welchen zu noch dauert dauern brauch brauche benötige
darf dürfen durfte auszahlen auszahlt ausgezahlt rechne rechnen rechnet gerechnet berechnet berechnen trägt tragen anfällt anfallen fällt fallen
jänner januar jaenner februar feber märz april mai juni juli august september oktober november dezember
abgeben abgegeben abzugeben einreichen eingereicht einzureichen abführen abgeführt abzuführen entrichten entrichtet
gezahlt bezahlt ausbezahlt ausgezahlt gemeldet melden erstatten erstattet binnen innerhalb macht machen ausmachen
einhalten einzuhalten beachten gedauert langem langen längerem längeren angefallen anfiel damals nachprüfen prüfen
gegolten trifft anzusetzen anzuwenden anwenden angewendet heranzuziehen vorlegt vorlegen vorgelegt vorweist vorweisen
planen plant geplant aufrollung aufrollen aufrolle aufgerollt hab habe gesehen gelesen unterlagen verschieden verschiedene verschiedenen
pflicht verpflichtend machen durchführen durchzuführen zuhause daheim garage versteuert versteuern besteuert besteuern
firma nix nichts kriegt kriegen kriege krieg
ihre ihrer ihren seine seiner seinen samt gearbeitet möchte möchten will wollen
klient klientin kunde kundin mandant mandantin chef chefin
kassiert kassieren mutter vater arbeitet arbeiten bleiben bleibt weiter weitergezahlt weiterbezahlt berücksichtigen berücksichtigt ansetzen angesetzt lohnsteuerabzug mein meine meinen meinem meiner unser unsere unseren unserem unserer eigene eigenen eigener eigenes eigenem konkret jeweils überhaupt eigentlich""".split())
# what a percentage is taken of ("Wie viel Prozent DB fallen auf die Lohnsumme an?"): said by a question asking for a
# rate, but seldom in the rate's row
_RATE_BASES = frozenset(light_stem(fold_plain(w)) for w in """
lohnsumme lohnsummen bruttolohnsumme arbeitslöhne arbeitslohn bruttolohn bruttolöhne bruttobezug bruttobezüge
bemessungsgrundlage beitragsgrundlage entgelt entgelts bruttoentgelt gehalt gehälter lohn löhne bruttogehalt""".split())
# question words that name a concept word in other words
_SAME_AS = {"start": "beginn", "startet": "beginn", "anfang": "beginn", "tochter": "kind", "sohn": "kind",
            "toechter": "kind", "soehne": "kind", "nachts": "nachtarbeit", "nacht": "nachtarbeit",
            "nachtdienst": "nachtarbeit", "nachtdienste": "nachtarbeit", "nachtschicht": "nachtarbeit",
            "nachtschichten": "nachtarbeit", "zusammen": "gemeinsam",
            "vorteil": "sachbezug", "vorteile": "sachbezug", "dienstverhaeltnis": "arbeitsverhaeltnis",
            "dienstverhaeltnisses": "arbeitsverhaeltnis", "herabgesetzt": "herabsetzung",
            "herabsetzen": "herabsetzung", "reduziert": "herabsetzung|reduktion", "reduzieren": "herabsetzung|reduktion",
            "verringert": "herabsetzung", "vorher": "vorangegangen", "davor": "vorangegangen",
            "wochenstunden": "stunden", "angeschafft": "anschaffung", "gekauft": "anschaffung",
            "erstzugelassen": "erstzulassung", "zwillinge": "mehrling", "zwillingen": "mehrling", "drillinge": "mehrling",
            "drillingen": "mehrling", "mehrlinge": "mehrling", "mehrlingen": "mehrling"}
# "mehr als die Hälfte seiner Arbeitszeit in der Nacht", "fast nur Nachtdienste": what a row calls "überwiegend"
_MOSTLY = re.compile(r"\bmehr\s+als\s+die\s+h[äa]lfte(?:\s+(?:der|seiner|ihrer)\s+\w*arbeitszeit)?\b|\bgr(?:ö|oe)(?:ß|ss)tenteils\b|\bgro(?:ß|ss)teils\b"
                     r"|\bhaupts[äa]chlich\b|\b(?:fast|praktisch|nahezu|beinahe)\s+(?:nur|ausschlie(?:ß|ss)lich|immer)\b"
                     r"|\bso\s+gut\s+wie\s+(?:nur|immer|ausschlie(?:ß|ss)lich)\b"
                     r"|\b(?:nur|ausschlie(?:ß|ss)lich|immer)(?=\s+(?:in\s+der\s+)?nacht)"
                     r"|\bzum\s+gr(?:ö|oe)(?:ß|ss)ten\s+teil\b|\bmeistens\b", re.I)
# the staff member a question speaks of ("beim Mitarbeiter zuhause", "MA fragt …"): the Arbeitnehmer or Dienstnehmer
# of a row's label when it names one, else a word of the case that needs no counterpart (lookup._CASE_WORDS)
STAFF_WORDS = frozenset({"ma", "mitarbeiter", "mitarbeiterin", "mitarbeitern", "mitarbeiters", "mitarbeiterinnen",
                         "kollege", "kollegin", "kollegen", "kolleginnen", "schichtarbeiter", "schichtarbeiterin",
                         "aussendienstler", "aussendienstlerin", "aussendienstmitarbeiter", "aussendienstmitarbeiterin"})
_STAFF_ALTERNATIVES = frozenset({"arbeitnehm", "dienstnehm"})
# "steuerfrei" of a benefit in kind is what a row calls "sachbezugsfrei", "lohnsteuerfrei", "abgabenfrei"
_TAX_FREE = frozenset(light_stem(w) for w in ("steuerfrei", "lohnsteuerfrei", "sachbezugsfrei", "abgabenfrei"))
# "für wie viele Überstunden steuerfrei": the rows call the tax-free count "begünstigt"
_TAX_FREE_COUNT = light_stem("beguenstigt")
_HOW_MANY = re.compile(r"\bwie\s*viele\b", re.I)
# what the question asks for, by its wording: the unit kinds of a fact that answer it (used to choose between
# concepts of one entry that all fit the words, e.g. "Beitragssatz" 1,53 % and "Beitragspflicht" ab dem 2. Monat)
_AMOUNT_UNITS = frozenset({"€", "%", "Prozentpunkte"})
_DURATION_UNITS = frozenset({"Tage", "Werktage", "Arbeitstage", "Wochen", "Monate", "Jahre", "Dienstjahre", "Stunden",
                             "Überstunden", "Monatsentgelte"})
_ASKS = (
    # a rate word ends in -satz/-sätze ("Beitragssatz", "Steuersätze"); Ersatz, Einsatz, Zusatz, Absatz, Umsatz are
    # no rates, a "Kilometersatz" is an amount per km, and "Ersatzleistung" asks for an amount
    (re.compile(r"\b(?:prozent\w*|%|(?!(?:er|ein|zu|ab|um|auf|an)s[äa]tz|\w*(?:kilometer|km|kilometergeld)s[äa]tz)\w*s[äa]tz(?:e|es|en)?\b|\w*quote)", re.I),
     frozenset({"%", "Prozentpunkte"})),
    # "wie viel (bezahlte) Freizeit": a span of time, not an amount
    # a notice period is a span ("Welche Kündigungsfrist müssen wir einhalten?"), not the Kündigungstermin
    (re.compile(r"\bwie\s+lange?\b|\bdauer\w*|\bk[üu]ndigungsfrist\w*|\bwie\s*viele[n]?\s+(?:\w+\s+)?\w*(?:tage|werktage|arbeitstage|wochen|"
                r"monate|jahre|stunden)n?\b|\bwie\s*viel\s+(?:\w+\s+)?(?:frei)?zeit\b", re.I), _DURATION_UNITS),
    # "ab welcher Summe … fällig": an amount, though "fällig" follows
    (re.compile(r"\bwelche[rmns]?\s+(?:\w+en\s+)?(?:summe|betrag|h[öo]he|einkommen|jahreseinkommen|entgelt\w*"
                r"|monatsbezug|bezug|lohnsumme)\b", re.I), _AMOUNT_UNITS),
    (re.compile(_FROM_WHICH_MONTH + r"|\b(?:bis|ab|seit)\s+wann\b|\bwann\b|\b(?:seit|ab)\s+welchem\s+(?:Kalender)?jahr\b"
                r"|\bf[äa]llig\w*"
                r"|\btermin\w*|\bstichtag", re.I),
     frozenset({"Termin", "Datum"})),
    (re.compile(r"\bwie\s+(?:hoch|viel)\b(?!\s+(?:tage|wochen|monate|jahre|stunden))|\bbetrag\w*|\beuro\b|€|"
                r"\bh[öo]he\b", re.I), _AMOUNT_UNITS),
)
# two questions in one ("wie viele Stunden und welcher Höchstbetrag?"): left to the normal answer
_INTERROGATIVE = re.compile(r"\b(?:wie\s+(?:hoch|viel|viele|lange?)|wieviele?|welche[rsmn]?|bis\s+wann|ab\s+wann|"
                            r"bis\s+zu\s+welche[rmn]?)\b", re.I)
_SECOND_ASK = re.compile(r"\b(?:und|sowie)\s+(?:wie\s+(?:hoch|viel|viele|lange?)|wieviele?|welche[rsmn]?|bis\s+wann|ab\s+wann|"
                         r"seit\s+wann|wann|bis\s+zu\s+welche[rmn]?)\b", re.I)
# a hyphenated compound written apart ("Sonder-Zahlungen", "Höchst-Beitragsgrundlage") is one word; an
# abbreviation before the hyphen stays a word of its own ("BV-Beitrag", "SEG-Zulagen")
_HYPHEN_COMPOUND = re.compile(r"\b([A-Za-zÄÖÜäöüß][a-zäöüß]{2,})-([A-ZÄÖÜ][a-zäöüß]{3,})\b")
# words of a question that name the wanted unit, not the concept
# "von seinem Entgelt", "ihrer Entgelte": whose, not what
_POSSESSIVES = frozenset(stem + ending for stem in ("sein", "ihr", "unser", "mein", "dein", "euer", "eur")
                         for ending in ("", "e", "em", "en", "er", "es"))
_UNIT_WORDS = frozenset({"prozent", "prozentsatz", "euro", "eur"})
_BOUND_WORDS = {"ab": "ab", "nach": "ab", "über": "ab", "ueber": "ab", "mindestens": "ab", "bis": "bis",
                "unter": "bis", "höchstens": "bis", "hoechstens": "bis"}


@dataclass
class Question:
    """A value question, parsed: its words (each with its alternatives), the asked period and basis."""

    text: str
    words: list[frozenset] = field(default_factory=list)
    period: Period | None = None
    basis: str = ""
    bounds: frozenset = frozenset()
    asks: frozenset = frozenset()
    points: dict = field(default_factory=dict)     # numbers of a staged dimension (tiers.question_points)
    stated: Decimal | None = None   # a rate the question names to ask for its threshold ("ab welchem Einkommen 48 %?")
    implied: frozenset = frozenset()   # concept words its wording names without saying them ("bis zu welchem Betrag")
    case: frozenset = frozenset()      # words of a case told before the ask ("Sie hat € 7.200 brutto. Bis zu …")
    bases: frozenset = frozenset()     # several bases asked at once ("monatlich und täglich"), else empty

    @property
    def year(self) -> int | None:
        if self.period is None:
            return None
        return self.period.start if self.period.start is not None else self.period.end


_BETWEEN = re.compile(r"\bzwischen\s+(€?\s*\d[\d.,]*\s*(?:€|Euro)?)\s+und\s+", re.I)


_NEXT_BAND = re.compile(r"\bn[äa]chsten\s+(?:€\s*)?(\d{1,3}(?:\.\d{3})*)\s*(?:€|Euro)?\s*\(?\s*bis\s+(?:€\s*)?"
                        r"(\d{1,3}(?:\.\d{3})*)\b", re.I)


def _band_bounds(m: re.Match) -> str:
    """"die nächsten € 33.333 (bis € 83.333)": a band of that width that starts where the one before it ends, i.e.
    "€ 50.000 bis € 83.333"; its width is no bound."""
    lower = int(m.group(2).replace(".", "")) - int(m.group(1).replace(".", ""))
    return f"{lower} bis {m.group(2)}" if lower > 0 else m.group(0)


def _bounds(text: str) -> frozenset:
    """(bound, number) pairs: "über 60 km" → {("ab", "60")}; "20 bis 40 km" → {("", "20"), ("bis", "40")}."""
    out = set()
    text = _NEXT_BAND.sub(_band_bounds, text or "")
    text = _BETWEEN.sub(r"\1 bis ", text)       # "zwischen 25.000 und 50.000": a range like "25.000 bis 50.000"
    words = re.findall(r"[^\W\d_]+|\d+(?:[.,]\d+)*", text)
    for pos, word in enumerate(words):
        if word[0].isdigit() and not re.fullmatch(r"(?:19|20)\d{2}", word):
            before = [fold_plain(w) for w in words[max(0, pos - 2):pos] if not w[0].isdigit()]
            bound = next((_BOUND_WORDS[w] for w in reversed(before) if w in _BOUND_WORDS), "")
            out.add((bound, word.replace(".", "")))
    return frozenset(out)


# a count written as a word before a counted noun ("mit einem Kind", "für zwei Kinder"): the number of a row's variant
_COUNTED_RE = re.compile(r"\b(" + "|".join(sorted(CARDINALS, key=len, reverse=True)) + r")\s+(Kind(?:er|ern|es)?)\b",
                         re.I)


# "Ab welcher Lohnsumme fällt die DAG an?": the sum named is what a threshold is, the value asked
_ASKED_SUM = re.compile(r"\b(?:ab|bis\s+zu|bis)\s+welche[mrns]?\s+(?:[^\W\d_]+e[nrm]?\s+)?([^\W\d_]*summen?)\b",
                        re.I)
# "Bis zu welchem Betrag sind Überstundenzuschläge steuerfrei?", "bis wie viel": asks for a Höchstbetrag
_ASKS_CAP = re.compile(r"\bbis\s+(?:zu\s+)?(?:welche[mrn]?\s+(?:\w*betrag|summe|h[öo]he)\b|wie\s*viel)", re.I)
_CAP_KEY_WORDS = frozenset(light_stem(fold_plain(w)) for w in ("Höchstbetrag", "Obergrenze", "Höchstgrenze"))
# "Bis zu welchem Betrag werden die SV-Beiträge gerechnet?", "Angestellter mit € 8.200: Von welchem Betrag berechnen
# wir die SV-Beiträge?": the contributions' ceiling, the Höchstbeitragsgrundlage, asked without its name ("von
# welchem Betrag" only for a pay the question states: without one it asks how the basis is made up)
_BASE_ASK = re.compile(r"\b(bis\s+zu|bis|von)\s+welche[mr]?\s+(?:(?:Jahres|Monats)?betrag|Grundlage|Beitragsgrundlage|Höhe|"
                       r"Entgelt|Gehalt|Bezug|(?:Jahres|Monats)?summe)\b", re.I)
_BASE_VERB = re.compile(r"\b(?:be|ge|ab)?rechne[nt]?\b|\bberechnet\b|\bbemessen\b|\bverbeitragt\b"
                        r"|\bbeitragspflichtig\b|\bSV-pflichtig\b|\bsozialversicherungspflichtig\b", re.I)
_SV_CONTRIBUTIONS = re.compile(r"\b(?:SV|Sozialversicherung)[-\s]?(?:Beitr[äa]g\w*)?\b|\bBeitr[äa]ge\b"
                               r"|\bKrankenkasse\b|\bÖGK\b|\bbeitragspflichtig\b", re.I)
# the Pendlerpauschale's two variants, told by whether public transport can be used for the commute
_TRANSIT = r"(?:öffis|öffentliche\w*(?:\s+verkehrsmittel\w*)?|bus\s+und\s+bahn|bahn\s+und\s+bus|öffentlich)"
_TRANSIT_NOT = re.compile(rf"\b{_TRANSIT}\s+(?:\w+\s+){{0,5}}(?:nicht\s+zumutbar|unzumutbar|nicht\s+(?:möglich|machbar|"
                          rf"erreichbar|verfügbar))|\b(?:nicht|kaum|schwer)\s+(?:\w+\s+){{0,4}}mit\s+{_TRANSIT}"
                          rf"|\bmit\s+(?:den\s+|dem\s+)?{_TRANSIT}\s+(?:\w+\s+){{0,5}}(?:nicht|kaum|unmöglich|praktisch\s+nicht)\b"
                          rf"|\bkein(?:e|en)?\s+{_TRANSIT}", re.I)
_TRANSIT_OK = re.compile(rf"\b{_TRANSIT}\s+(?:\w+\s+){{0,5}}zumutbar|\b(?:problemlos|gut|leicht|ohne\s+weiteres)\s+"
                         rf"(?:\w+\s+){{0,2}}mit\s+{_TRANSIT}|\bmit\s+{_TRANSIT}\s+(?:\w+\s+){{0,3}}(?:problemlos|"
                         rf"gut|leicht)\b", re.I)
# values the synonym table joins for the search but that are different values: a question on the Pendlerpauschale
# is no question on the Pendlereuro (€ 2 per km and year), nor the other way round
_DISTINCT_VALUES = {"pendlerpauschal": frozenset({"pendlereuro"}), "pendlereuro": frozenset({"pendlerpauschal"}),
                    # the Lohnnebenkosten take in the DZ, but the word names none of its rows: "Lohnnebenkosten
                    # 2025: mit wie viel Prozent DB?" is the DB, not the "Zuschlag zum Dienstgeberbeitrag"
                    "lohnnebenkost": frozenset({"zuschlag"})}
# the basis an asked sum names itself ("bis zu welchem Jahresbetrag", "welche Monatssumme")
_ASKED_BASIS = re.compile(r"\bwelche[mrns]?\s+(Jahres|Monats|Tages)(?:betrag|summe)\b", re.I)
_SUM_BASES = {"jahres": "jährlich", "monats": "monatlich", "tages": "täglich"}
# (the night the negated rule speaks of goes with it: "arbeitet nicht überwiegend in der Nacht")
_NOT_MOSTLY = re.compile(r"\b(?:nicht|kein\w*)\s+(?:\w+\s+)?(?:überwiegend\w*|hauptsächlich)"
                         r"(?:\s+(?:in\s+der\s+Nacht|nachts|Nachtarbeit|Nachtdienst\w*|in\s+Nachtschicht\w*))?"
                         # "Überwiegend nachts arbeite ich nicht": the negation at the end of the clause
                         r"|\b(?:überwiegend\w*|hauptsächlich)\s+(?:in\s+der\s+Nacht|nachts|in\s+Nachtschicht\w*)"
                         r"\s+(?:\w+\s+){1,3}?(?:nicht|kaum)\b", re.I)
# a condition told about the case in a relative clause ("…, das über dem CO2-Grenzwert liegt")
_CONDITION_CLAUSE = re.compile(r",?\s*\b(?:das|der|die|welche[rs]?)\s+(?:[\w-]+\s+){0,2}(?:über|unter|oberhalb|unterhalb)"
                               r"\s+(?:dem|der|den)\s+[\w-]+(?:\s+[\w-]+)?\s+(?:liegt|liegen|lag|lagen)\b", re.I)
# the firm as the place of the case ("im Betrieb", "in unserem Betrieb"); "für unseren Betrieb" may name a rate's
# payer and stays
_IN_THE_FIRM = re.compile(r"\b(?:bei\s+uns\s+)?(?:im|in\s+(?:unserem|meinem|einem))\s+Betrieb\b", re.I)
_OLD_PAYSLIP = re.compile(r"\b(?:alte[nrs]?|frühere[nrs]?|vergangene[nrs]?)\s+(?:Lohn|Gehalts)?abrechnung(?:en)?\b", re.I)
# free of tax, said in other words
_NO_TAX = re.compile(r"\b(?:(?:steuerlich|lohnm[äa]ßig|lohnsteuerlich)\s+)?ohne\s+(?:steuerliche\s+)?(?:Folgen|Konsequenzen)\b"
                     r"|\b(?:beim\s+Lohn\s+|lohnm[äa]ßig\s+)?(?:nichts|nix)\s+(?:zu\s+)?(?:versteuern|ansetzen)\b"
                     r"|\bpassiert\s+(?:da\s+)?(?:lohnm[äa]ßig\s+|steuerlich\s+)?(?:nix|nichts)\b", re.I)
_CEILING_KEY_WORDS = frozenset({light_stem(fold_plain("Höchstbeitragsgrundlage"))})
_CEILING_ASK_WORDS = frozenset(light_stem(fold_plain(w)) for w in """sv sozialversicherung beiträge beitrag krankenkasse
ögk beitragspflichtig sozialversicherungsbeiträge svbeiträge deckel pflichtig svpflichtig sozialversicherungspflichtig
zusammen gemeinsam insgesamt gehalt lohn entgelt""".split())
_YEARLY = re.compile(r"\bim\s+Jahr\b|\bj[äa]hrlich", re.I)
# "DN-Anteil insgesamt", "gesamt", "in Summe": the row "Summe" of a table of parts
_ASKS_TOTAL = re.compile(r"\b(?:insgesamt|gesamt|summe|zusammen|total)\b", re.I)
_TOTAL_KEY_WORDS = frozenset({light_stem(fold_plain("Summe"))})


# "Ab welchem Jahresbetrag sind keine SV-Beiträge mehr fällig?", "… zahlt man keine höheren SV-Beiträge mehr?"
_NO_MORE_ASK = re.compile(r"\bab\s+welche[mr]?\s+(?:\w+en\s+)?(?P<sum>\w*(?:betrag|summe|entgelt|einkommen|gehalt|bezug))\b"
                          r"[^?]{0,80}?\bkeine\s+(?:h(?:ö|oe)heren\s+)?(?:SV[-\s]?)?\w*beitr[äa]ge?\w*"
                          r"(?:\s+mehr)?(?:\s+(?:fällig|anfallen|an|zu\s+zahlen))?", re.I)


def _asks_contribution_ceiling(text: str) -> bool:
    if _NO_MORE_ASK.search(text):
        return True
    asked = _BASE_ASK.search(text)
    if not asked or not _BASE_VERB.search(text) or not _SV_CONTRIBUTIONS.search(text):
        return False
    return not asked.group(1).lower().startswith("von") or bool(STATED_PAY.search(text))


# "pro vollem Tag", "für einen ganzen Tag": a day's rate ("Taggeld pro Tag")
_WHOLE_TRAVEL_DAY = re.compile(r"\b(?:voll|ganz)(?:e|en|em|er)?\s+Reisetag(?:e|en|es)?\b", re.I)    # a day's rate
_WHOLE_DAY = re.compile(r"\b(?:voll|ganz)(?:e|en|em|er)?\s+(?=Tag\b)", re.I)


def _counted(text: str) -> str:
    return _COUNTED_RE.sub(lambda m: f"{CARDINALS[m.group(1).lower()]} {m.group(2)}", text)


def parse_question(text: str, synonyms: Iterable[tuple[str, str]] = ()) -> Question | None:
    """The question's concept words with their alternatives, or None when it is no value question."""
    if not text:
        return None
    ceiling = _asks_contribution_ceiling(text)     # "Von welchem Betrag berechnen wir die SV?" asks a value
    if (_NOT_VALUE.search(text) and not ceiling and not _RATE_WITH.search(text)) or (
            _MODAL.search(text) and not _ASKS_FIGURE.search(text)):
        return None
    if len(_INTERROGATIVE.findall(text)) > 1 and re.search(r"\b(?:und|sowie)\b", text):
        return None
    if _SECOND_ASK.search(text):
        return None         # "Kündigungsfrist im 16. DJ und wie viele Wochen EFZ?": the first ask has no question word
    while _HYPHEN_COMPOUND.search(text):
        text = _HYPHEN_COMPOUND.sub(lambda m: m.group(1) + m.group(2).lower(), text)
    text = digits_for_words(_WHOLE_DAY.sub("", _WHOLE_TRAVEL_DAY.sub("Tag", text)))   # "im 1. Dienstjahr"
    text = in_the_rows_words(text)      # "nach der Entbindung", "nur unfallversichert", "in welchem Rahmen", …
    # the ceiling, said the usual way (the sum named stays: "Jahresbetrag" says the basis)
    text = _NO_MORE_ASK.sub(lambda m: f" bis zu welchem {m.group('sum')} SV-Beiträge ", text)
    asked_basis = _ASKED_BASIS.search(text)
    asks = asked_units(text)       # before the sum is dropped: "ab welcher Summe … fällig" asks for an amount
    threshold = bool(_ASKS_THRESHOLD.search(text))
    # "(nicht überwiegend Nachtarbeit)": the row of the other case, not the one "überwiegend" selects
    text = _MOSTLY.sub("überwiegend", _SEVERAL.sub(" ", _NOT_MOSTLY.sub(" ", text)))
    # the variant public transport decides is a word of the ask, not of the case told before it
    # (not for a question on the Pendlereuro alone: "Wie viel Pendlereuro pro Kilometer?" asks no Pauschale)
    euro_only = "pendlereuro" in text.lower() and "pauschal" not in text.lower()
    if not euro_only and _TRANSIT_NOT.search(text):
        text = f"{text} großes Pauschale"
    elif not euro_only and _TRANSIT_OK.search(text):
        text = f"{text} kleines Pauschale"        # "mehrere geringfügig Beschäftigte": not "mehr" (als 60 km)
    # the employer's notice told in the case ("wird von uns gekündigt", "durch den Dienstgeber"): the row of the
    # Arbeitgeberkündigung, not the employee's
    text = EMPLOYER_NOTICE_WORD.sub("Arbeitgeberkündigung", text)
    # the employee's own notice told in other words ("kündigt selbst", "will von sich aus aufhören"): the row
    # "Kündigung durch Arbeitnehmer"
    text = EMPLOYEE_NOTICE.sub(" Kündigung durch Arbeitnehmer ", text)
    notice = bool(EMPLOYER_NOTICE.search(text)) and "Arbeitgeberkündigung" not in text
    if notice:
        text = f"{text} Arbeitgeberkündigung"
    # "für ein Firmenauto, das über dem CO2-Grenzwert liegt": a condition on the case, not the value asked
    text = _CONDITION_CLAUSE.sub(" ", text)
    # "mehrere Geringfügige im Betrieb": where the people work, not a word of the value asked
    text = _IN_THE_FIRM.sub(" ", text)
    text = _OLD_PAYSLIP.sub(" Abrechnung ", text)      # "eine alte Abrechnung aus 2022": a payslip of that year
    # "bleibt das steuerlich ohne Folgen", "müssen wir beim Lohn nichts ansetzen": what "steuerfrei" says
    text = _NO_TAX.sub(" steuerfrei ", text)
    # "ab welcher Summe ihrer Entgelte": what the sum is of belongs to the ask, like the sum itself
    text = _SUM_OF.sub(" ", text) if threshold else text
    text = _ASKED_SUM.sub(lambda m: m.group(0)[:m.start(1) - m.start(0)], text)
    raw_words = word_tokens(text)
    short = len(raw_words) <= MAX_WORDS_SHORT
    if not short and not is_value_question(text) and not _ASKS_VALUE.search(text) and not ceiling:
        return None
    table: dict[str, list[str]] = {}
    for term, expansions in synonyms or ():
        table.setdefault(fold_plain(term or "").strip(), []).extend(
            e.strip() for e in (expansions or "").split(";") if e.strip())
    words: list[frozenset] = []
    law = re.compile(r"§+\s*\d+[a-z]?(?:\s*(?:Abs\.?|Z\.?|lit\.?)\s*\d+[a-z]?)*\s*[A-ZÄÖÜ][A-Za-zÄÖÜäöü]*G\b")
    plain = _counted(law.sub(" ", text))
    for raw in word_tokens(strip_basis(plain)):
        if raw.isdigit() or len(raw) < 2:
            continue
        folded = fold_plain(raw)
        stem = light_stem(folded)
        if folded in QUESTION_STOPWORDS or folded in ANSWER_STOPWORDS or stem in _ASK_WORDS or stem in GENERIC \
                or folded in _UNIT_WORDS or folded in _POSSESSIVES:
            continue
        if folded in _SAME_AS and light_stem(_SAME_AS[folded]) in GENERIC:
            continue
        if raw.lower() in CARDINALS:
            continue        # "Wir haben drei Geringfügige": a count of the case (counts a row needs are digits by now)
        alternatives = {stem}
        if folded.endswith("em") and len(folded) >= 6:      # "mit vollem Entgelt": the stem drops no -em
            alternatives.add(light_stem(folded[:-2]))
        if folded in _SAME_AS:
            alternatives.add(_SAME_AS[folded])
        if folded in STAFF_WORDS:
            alternatives |= _STAFF_ALTERNATIVES
        if stem in _TAX_FREE:
            alternatives |= _TAX_FREE
            if _HOW_MANY.search(text):
                alternatives.add(_TAX_FREE_COUNT)
        for key in (folded, stem):
            for expansion in table.get(key, ()):
                alternatives.update(s for s in stems(expansion) if s not in _DISTINCT_VALUES.get(stem, ()))
        words.append(frozenset(alternatives))
    basis = basis_of(text)
    bases = bases_of(text)
    if asked_basis:
        # "Gehalt € 7.500 monatlich, …: bis zu welcher Jahressumme …?": the ask's own sum says the basis, not the case
        basis, bases = _SUM_BASES[asked_basis.group(1).lower()], frozenset()
    if len(bases) > 1:
        basis = ""                  # "HBGL monatlich und täglich?": each of them, not the first
    if ceiling and not basis and STATED_PAY.search(text) and not _YEARLY.search(text):
        basis = "monatlich"         # a pay told without its period is a month's ("hat im März € 7.200 brutto")
    words = [w for w in words if not ((basis or len(bases) > 1) and w & {"monatlich", "taeglich", "jaehrlich",
                                                                          "woechentlich"})]
    if not words:
        return None
    implied = _CAP_KEY_WORDS if _ASKS_CAP.search(text) else frozenset()
    implied |= implied_key_words(text)     # "wie lange dauert" names the "Dauer"; the Inland is the default
    if _ASKS_TOTAL.search(text):
        implied |= _TOTAL_KEY_WORDS
    if threshold:
        implied |= _THRESHOLD_KEY_WORDS
    if ceiling:
        implied = (implied - _CAP_KEY_WORDS) | _CEILING_KEY_WORDS     # the ceiling, not any Höchstbetrag
        # the words of the ask itself ("bei der Krankenkasse beitragspflichtig") are what the ceiling is of
        words = [w for w in words if not w & _CEILING_ASK_WORDS] or words
    # the start of the employment a case tells ("Eintritt 1. 4. 2018, … im Oktober 2024") is no year asked
    start = service_start(text)
    period_text = re.sub(rf"(?<![\d.,]){start}\b", " ", text, count=1) if start else text
    return Question(text, words, find_period(period_text, "cell"), basis, _bounds(plain), asks,
                    question_points(text), _stated_rate(text), implied,
                    case_words(text) | (NOTICE_WORDS if notice else frozenset()),
                    bases if len(bases) > 1 else frozenset())


# "Ab welchem Jahreseinkommen gilt der Steuersatz von 48 %?": the rate is given, the threshold (a row label) asked
_THRESHOLD_ASK = re.compile(r"\b(?:ab|bis\s+zu|bis)\s+welche[mrs]?\s+(?:\w+\s+)?(?P<sum>\w*einkommen|\w*betrag|\w*bezug|summe|"
                            r"lohnsumme|entgelt|gehalt|\w*grundlage|bgl|bmgl|grenze)\b", re.I)


def threshold_noun(text: str) -> str:
    """The (folded, stemmed) sum a threshold ask names ("Bis zu welchem Jahreseinkommen …" → jahreseinkomm), or ""."""
    m = _THRESHOLD_ASK.search(text or "")
    return light_stem(fold_plain(m.group("sum"))) if m else ""
_STATED_RATE = re.compile(r"(?<![\d.,])(\d{1,2}(?:,\d{1,2})?)\s*-?\s*(?:%|Prozent\b)")
# the zero rate said in words, of an income: "Nullsteuerzone", "Nullzone", "keine Lohnsteuer", "lohnsteuerfrei"
_ZERO_RATE = re.compile(r"\bnull\s*-?\s*(?:steuer)?(?:zone|stufe|satz|tarif|prozent)\w*|\bnullsteuer\w*"
                        r"|\bkeine(?:rlei)?\s+(?:lohn|einkommen)?steuer\b|\b(?:lohn|einkommen)?steuerfrei\b", re.I)
_INCOME_ASK = re.compile(r"\b(?:ab|bis\s+zu|bis)\s+welche[mrs]?\s+(?:\w+\s+)?\w*einkommen\b", re.I)


def _stated_rate(text: str) -> Decimal | None:
    rates = _STATED_RATE.findall(text or "")
    if not rates and _ZERO_RATE.search(text or "") and _INCOME_ASK.search(text or ""):
        return Decimal(0)       # "Bis zu welchem Jahreseinkommen war man 2024 lohnsteuerfrei?"
    if len(rates) != 1 or not _THRESHOLD_ASK.search(text or ""):
        return None
    return Decimal(rates[0].replace(",", "."))


def asked_units(text: str) -> frozenset:
    """The units a value answering the question may have, by the first kind of ask the question names
    ("wie viel Prozent" → %, "wie lange" → durations, "bis wann" → dates), or empty (any)."""
    for pattern, units in _ASKS:
        match = pattern.search(text)
        if match and "%" in units and match.group(0).lower() in ("satz", "sätze") and _PER_KM.search(text):
            continue        # "Kilometergeld fürs Fahrrad – welcher Satz hat da gegolten?": an amount per km
        if match:
            return units
    return frozenset()


_PER_KM = re.compile(r"kilometer|\bkm\b", re.I)
