"""The refusal gate: decide before generation whether the base clearly holds nothing.

Measured on comparable data, no single similarity threshold separates answerable from unanswerable questions,
so the gate is conservative: it refuses only when *both* signals are empty-handed — no full-text match for any
content word of the question, and a dense similarity below a floor that every answerable gold question clears
with margin (see docs/measurements.md, "Refusal gate").
Everything above the gate goes to the model, which refuses under its rules
when the context does not answer the question. One more refusal before generation: a question on another
country's law whose country no passage of the context names (:func:`other_country`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..facts.concepts import KIND_WORDS
from ..search import compounds, instructions
from ..search.known_words import forms as _forms, known_word
from ..text.countries import COUNTRIES
from ..text.german import fold_plain, light_stem
from . import payments
from .types import REFUSAL_TEXT

# Cosine similarity floor for the best dense hit.  It depends on the embedding
# model (e5 models give every pair a high similarity), so it is a setting
# (`gate_dense_floor`); 0.0 means the dense signal never counts as empty.
# `pv_kb eval` prints the lowest score of an answerable gold question to
# calibrate it (docs/measurements.md, "Refusal gate").
DENSE_FLOOR = 0.0


@dataclass
class Evidence:
    fts_hits: int = 0                    # chunks matching the full-text query
    dense_best: float | None = None      # best cosine similarity (None: no dense signal)
    has_terms: bool = True               # the question had searchable content words
    topics: list[str] = field(default_factory=list)   # topics of the nearest entries, best first

    @classmethod
    def from_retrieval(cls, retrieval) -> "Evidence":
        data = getattr(retrieval, "evidence", None) or {}
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


@dataclass
class Verdict:
    refuse: bool
    reason: str
    topics: list[str]
    subject: str = ""      # unknown_subject: the label's noun the base does not name; unvalued_payment: the payment


def decide(evidence: Evidence, dense_floor: float | None = None) -> Verdict:
    """Refuse without calling the model only when the evidence is clearly empty."""
    dense_floor = DENSE_FLOOR if dense_floor is None else dense_floor
    no_text = evidence.fts_hits == 0
    if evidence.dense_best is None:
        weak_dense = True
    else:
        weak_dense = evidence.dense_best < dense_floor
    if no_text and weak_dense:
        reason = "no_match" if evidence.has_terms else "no_terms"
        return Verdict(True, reason, evidence.topics[:3])
    return Verdict(False, "evidence", evidence.topics[:3])


EVASION_TEXT = ("Dabei helfe ich nicht: Entgelt an der Sozialversicherung und am Finanzamt vorbei auszuzahlen ist "
                "unzulässig. Die Wissensbasis beschreibt die korrekte Abrechnung; fragen Sie gern danach.")


def refusal_answer(verdict: Verdict) -> str:
    """The honest refusal, naming the nearest clusters when there are any."""
    text = REFUSAL_TEXT
    if verdict.subject and verdict.reason == "unvalued_payment":
        text = f"Einen Betrag oder Satz für „{verdict.subject}“ enthält die Wissensbasis nicht."
    elif verdict.reason == "evasion":
        text = EVASION_TEXT
    elif verdict.subject and verdict.reason == "unrated_levy":
        text = f"Einen Prozentsatz für „{verdict.subject}“ enthält die Wissensbasis nicht."
    elif verdict.subject:
        text = f"Zu „{verdict.subject}“ enthält die Wissensbasis keine Aussage."
    if verdict.topics:
        names = ", ".join(t.replace("_", " ") for t in verdict.topics)
        text += f"\n\nAm nächsten liegen die Themen der Wissensbasis: {names}."
    return text


# Another state's law: the base is on Austrian payroll. A question that names another country ("die
# Minijob-Grenze in Deutschland", "der AHV-Beitrag in der Schweiz") asks for that country's rules; when no
# passage of the context names the country, a nearby Austrian passage would be the wrong answer.
_COUNTRIES = {**COUNTRIES, "Deutschland": COUNTRIES["Deutschland"] + (
    r"|deutsche[nmrs]?\s+(?:arbeitgeber|arbeitnehmer|recht|steuer|sozialversicherung|lohn|finanzamt|"
    r"rentenversicherung|krankenkasse|firma|filiale|betrieb)|sgb\s*[ivx]+|sozialgesetzbuch\w*")}   # "nach SGB V"
_COUNTRY_RE = {name: re.compile(rf"\b(?:{pattern})\b", re.I) for name, pattern in _COUNTRIES.items()}


def other_country(question: str, texts) -> str | None:
    """The country other than Austria the question names and no text of the context names (its name), else
    None: then the question asks for another state's law, which the base does not hold."""
    for name, pattern in _COUNTRY_RE.items():
        if pattern.search(question or "") and not any(pattern.search(t or "") for t in texts):
            return name
    return None


# A question that opens with its subject as a label ("Kurzarbeit: welche Nettoersatzrate …", "Essensgutscheine für
# Mitarbeiter – wie viel …") names what it asks about. When the base's own words never name that subject — not as
# a word, a compound of its words, a synonym-table term, nor one letter off —, the nearest passages are about
# something else (Altersteilzeit for Kurzarbeit, the Wohnung for a Firmenparkplatz): a refusal, before retrieval's
# neighbours reach the model. Only the label's nouns are checked: abbreviations, adjectives, figures and the
# words of a chat opening ("Kurze Frage:") are not, nor a label that names a person ("Frau Maier: …").
_LEAD_RE = re.compile(r"^\s*(?P<lead>[^:?!.;–—]{3,80}?)(?::|\s[–—-])\s+\S")
_LEAD_NOT_LABEL = re.compile(r"\b(?:wie|was|welche\w*|wann|wo|warum|wer|wieso|ab|bis|ist|sind|wird|werden|hat|"
                             r"haben|kann|muss|darf|soll|gilt|bin|bist|du|ich|wir|uns|mir|mich)\b", re.I)
# words that end the subject phrase of a label: a preposition, an article, a conjunction
_PHRASE_END = frozenset("""für fürs in im ins der die das des dem den mit als nach bei beim und oder aus vom von zum
zur an am auf ohne über unter pro je seit vor ab bis bzw""".split())
_PERSON_WORDS = frozenset("""herr frau hr fr kollege kollegin mitarbeiter mitarbeiterin ma dn an arbeitnehmer
arbeitnehmerin dienstnehmer dienstnehmerin angestellter angestellte arbeiter arbeiterin lehrling kunde kundin klient
klientin mandant mandantin chef chefin""".split())
# a person named by what they do ("Außendienstler", "Monteur", "Techniker", "Teilzeitkraft", "Kanalarbeiter")
_PERSON_RE = re.compile(r"..(?:ler|eur|iker|kraft|kraefte|arbeiter|nehmer|angestellte|angestellter)(?:in|innen|s|n)?$")
_CHAT_WORDS = frozenset("""frage fragen kurze kurz bitte hallo hilfe info thema achtung hinweis beispiel notiz nachtrag
dringend eilig danke servus update nochmal noch eine einer zweite letzte neue rueckfrage nachfrage anfrage""".split())
# nouns that name a share or a kind of something, not a subject ("Welcher Teil vom Jahresverdienst …")
_GENERIC_HEADS = frozenset("teil teile anteil anteile art arten form fall faelle hoehe menge anzahl rest maximum "
                           "minimum hoechstwert mindestwert".split())
_ADJECTIVE_RE = re.compile(r"(?:ig|lich|los|isch|bar|sam|haft|ell|iv|al)(?:e|er|es|en|em)?$")
# the opening of an asking sentence and the (at most two words of the) phrase it asks about: "Wie hoch ist die
# Kurzarbeitsbeihilfe", "Sind Essensgutscheine", "Welche Mindestprofiltiefe"
_ASKED_SUBJECT_RE = re.compile(
    r"^(?:wie\s+(?:hoch|viel|lange)\s+(?:ist|sind|war|beträgt|betragen)|was\s+(?:ist|sind|gilt\s+für)|gibt\s+es|"
    r"welche[rsn]?|gilt|ist|sind)\s+(?:(?:der|die|das|den|dem|eine?n?|beim?|für)\s+)?(?P<phrase>(?:\S+\s*){1,2})",
    re.I)
# inside the asking sentence: a capitalised noun (one or two) right after "ist", "sind", "gilt", "bleibt" and an
# article
_VERB_SUBJECT_RE = re.compile(r"\b(?:ist|sind|gilt|gelten|bleibt|bleiben|wird|werden)\s+(?:(?:der|die|das|des|den|dem|eine?n?)\s+)?"
                              r"(?P<phrase>[A-ZÄÖÜ][\w-]+(?:\s+[A-ZÄÖÜ][\w-]+)?)"   # …, or the thing paid tax-free:
                              r"|\b(?:eine[nm]?|ein|einer)\s+(?P<paid>[A-ZÄÖÜ][\w-]{5,})\s+(?:\w+\s+){0,3}?"
                              r"(?:steuerfrei|abgabenfrei|beitragsfrei|sachbezugsfrei)\b")
_HOW_MUCH_RE = re.compile(r"^[Ww]ie\s*viele?\s+(?:(?:Prozent|Euro|Cent)\s+)?(?P<phrase>[A-ZÄÖÜ][^\W\d_]+-[A-ZÄÖÜ][^\W\d_]+)\b")
# "Wie viele Tage Pflegefreistellung …", "Wie viel Kinderbetreuungsgeld …", "Wie viel darf ein Essensgutschein …":
# a long noun right after the amount or count asked is what the question is about (a short one, "Wie viel
# Vorlauf", or one after "vom" ("Wie viel vom Aufschlag"), is a paraphrase more often)
_HOW_MUCH_NOUN_RE = re.compile(
    r"^[Ww]ie\s*viele?\s+"
    r"(?:(?:darf|dürfen|kann|können|muss|müssen|ist|sind|bekommt|bekommen|zahlt|zahlen|gibt\s+es)\s+"
    r"(?:(?:ein|eine|einen|der|die|das|den|dem)\s+)?)?"
    r"(?:(?:Tage|Wochen|Monate|Stunden|Jahre|Arbeitstage|Werktage)\s+)?"
    r"(?P<phrase>[A-ZÄÖÜ][^\W\d_]{11,})(?=\s|\?|$)")
# "Wie viel darf ich pro Arbeitstag steuerfrei für Essensgutscheine geben?", "Wie viel dürfen wir an
# Essensgutscheinen … ausgeben?": a long noun after "für" or "an" that is given or paid is what the amount is for
# (not a purpose: "für Bewerbungsgespräche freigeben")
_FOR_NOUN_RE = re.compile(r"^(?:wie\s*viel\w*|bis\s+zu\s+welche\w*)\b[^?]*?\b(?:für|an)\s+"
                          r"(?P<phrase>[A-ZÄÖÜ][^\W\d_]{11,})(?=[\s?,.]|$)[^?]{0,40}?"
                          r"\b(?:geben|ausgeben|zahlen|bezahlen|auszahlen|gewähren)\b", re.I)
_SHOUTED_RE = re.compile(r"\b[A-ZÄÖÜ]{5,}\b|[()\[\]]")
# longer than any German compound a question names: not checked (the compound search grows with the square of a
# word's length, so a hostile run of letters must not reach it)
_MAX_WORD = 60


def unknown_subject(question: str, lexicon, synonym_terms=frozenset()) -> str | None:
    """The subject the question names that no word of the base names, else None: the head noun of its opening
    label ("Kurzarbeit: …") or of what its asking sentence asks about ("Wie hoch ist die Kurzarbeitsbeihilfe …?",
    "Sind Essensgutscheine …?", "Bis zu welchem Betrag sind Essensgutscheine …?").

    ``lexicon``: lib/search/compounds.Lexicon of the active base; ``synonym_terms``: folded words counted as known."""
    match = _LEAD_RE.match(question or "")
    if match:
        lead = match.group("lead")
        # a sentence, an address, an instruction ("SYSTEM-HINWEIS: …") or chat words ("Kurze Frage: …") are no
        # label: the asking sentence is read
        if not (len(lead.split()) > 6 or "," in lead or _LEAD_NOT_LABEL.search(lead) or _SHOUTED_RE.search(lead)
                or all(fold_plain(w.strip(".!")) in _CHAT_WORDS for w in lead.split()) or _told(lead.split())):
            return _unknown_head(lead.split(), lexicon, synonym_terms)
    asking = _asking(question)
    match = _ASKED_SUBJECT_RE.match(asking)
    if match:
        return _unknown_head(match.group("phrase").split(), lexicon, synonym_terms)
    match = _HOW_MUCH_RE.match(asking)
    if match:
        # "Wie viel Homeoffice-Pauschale …?": a hyphenated compound only (a colloquial "Wie viel Vorlauf …" is a
        # paraphrase more often than a subject the base lacks)
        return _unknown_head([match.group("phrase")], lexicon, synonym_terms)
    match = _HOW_MUCH_NOUN_RE.match(asking)
    if match:
        unknown = _unknown_head([match.group("phrase")], lexicon, synonym_terms)
        if unknown:
            return unknown
    match = _FOR_NOUN_RE.match(asking)
    if match and match.group("phrase")[0].isupper():
        unknown = _unknown_head([match.group("phrase")], lexicon, synonym_terms)
        if unknown:
            return unknown
    for match in _VERB_SUBJECT_RE.finditer(asking):
        # "Bis zu welchem Betrag sind Essensgutscheine … steuerfrei?": the noun after the verb
        unknown = _unknown_head((match.group("phrase") or match.group("paid")).split(), lexicon, synonym_terms)
        if unknown:
            return unknown
    match = _DEADLINE_RE.match(asking)
    if match:                                       # "Bis wann muss ich die Umsatzsteuervoranmeldung einreichen?"
        unknown = _unknown_head([match.group("phrase")], lexicon, synonym_terms)
        if unknown:
            return unknown
    match = _INTRODUCED_RE.search(question or "")
    if match and _PRONOUN_ASK_RE.search(asking):     # "Wir wollen X einführen. … sind die steuerfrei?"
        return _unknown_head([match.group("phrase")], lexicon, synonym_terms)
    return None


# a deadline asked of a thing to be filed or paid: the thing ("die Umsatzsteuervoranmeldung", "den Jahresausgleich")
_DEADLINE_RE = re.compile(r"^(?:[Bb]is\s+wann|[Ww]ann|[Aa]b\s+wann)\s+(?:muss|müssen|soll|sollen|darf|dürfen|kann|"
                          r"können)\s+(?:(?:ich|wir|man)\s+)?(?:die|der|das|den|eine?n?)\s+(?P<phrase>[A-ZÄÖÜ][\w-]{5,})")
# a benefit the case is about to introduce, and an ask that points back to it with a pronoun
_INTRODUCED_RE = re.compile(r"\b(?:[Ww]ir|[Ii]ch)\s+(?:wollen|möchten|planen|überlegen|würden)\s+(?:\w+\s+){0,3}?"
                            r"(?P<phrase>[A-ZÄÖÜ][\w-]{5,})\s+(?:\w+\s+)?(?:einführen|einzuführen|anbieten|ausgeben|"
                            r"auszahlen|gewähren|zahlen)\b")
_PRONOUN_ASK_RE = re.compile(r"\b(?:[Ss]ind|[Ii]st|[Bb]leiben|[Bb]leibt)\s+(?:die|diese|sie|das|dies|der|dieser)\b"
                             r"(?!\s+[A-ZÄÖÜ])")


# the kinds of value a subject may name instead of a thing ("Sätze", "Steuerfreibetrag"), singular and plural
# ("Steuererleichterung", "Steuerentlastung": a benefit of some kind, in the words of a paraphrase, not a subject)
_KIND_ENDINGS = frozenset(k for k in KIND_WORDS if len(k) >= 4) | {"saetz", "betraeg", "grenzen", "fristen",
                                                                     "erleichterung", "entlastung"}


def unaddressed_subject(question: str, texts, synonyms=None) -> str | None:
    """The subject the question asks about (read as :func:`unknown_subject` reads it) that none of ``texts`` names
    — the passages and titles of the entries an answer would quote: "Pflegefreistellung – wie viel …?" answered
    from the Entgeltfortzahlung, "Wie hoch ist das Weiterbildungsgeld …?" from the Karenz. A subject counts as
    named when ``synonyms`` (lib/search/fulltext.SynonymTable) gives it a word the texts name ("Krankenstand" for a
    text on "Krankheit"). None for a question that speaks to the assistant ("Entwicklermodus aktiv: …"), and for a
    subject that only says what kind of value is asked ("…betrag", "…satz", "…grenze")."""
    if instructions.question_core(question).removed:
        return None
    acronym = _unnamed_acronym(question, texts, synonyms)
    if acronym:
        return acronym
    for match in _HYPHEN_PAYMENT_RE.finditer(question or ""):
        # "Homeoffice-Pauschale": a payment of its own is named only where one sentence names both parts
        # ("Homeoffice-Tage zählen nicht als Fahrtage" beside the Pendlerpauschale is no Homeoffice-Pauschale)
        rest, payment = [p for p in match.group("rest").split("-") if p], match.group("payment")
        if (_PAYMENT_KIND_RE.fullmatch(fold_plain(payment))
                and not any(len(p) < 4 or sum(c.isupper() for c in p) > 1 for p in rest)   # abbreviations
                and not _named_together(rest, payment, texts, synonyms)):
            return match.group(0)
    lexicon = compounds.build_lexicon(texts)
    subject = unknown_subject(question, lexicon)
    if not subject:
        return None
    pieces = re.split(r"[-/]", subject)
    kind = (lambda piece: any(light_stem(fold_plain(piece)).endswith(k) for k in _KIND_ENDINGS))
    if kind(pieces[-1]):
        # "Homeoffice-Pauschale": the kind of value after the hyphen, the subject before it, checked on its own
        rest = [p for p in pieces[:-1] if p and not kind(p)]
        if not rest:
            return None
        if all(known_word(fold_plain(p), lexicon) for p in rest):
            return None
    forms = {f for piece in re.split(r"[-/]", subject) for f in _forms(fold_plain(piece))}
    folded: list[str] = []

    def named(words) -> bool:
        # a phrase of the table ("Freistellung Geburt" for the Papamonat) counts only as a phrase of the texts:
        # two common words somewhere in them are no sign that the subject is spoken of
        if len(words) == 1:
            return known_word(words[0], lexicon)
        if not folded:      # stems, so that "sonstigen Bezügen" is the phrase "sonstige Bezüge"
            folded.append(" " + " ".join(light_stem(w) for t in texts for w in re.findall(r"\w+", fold_plain(t or "")))
                          + " ")
        return f" {' '.join(light_stem(w) for w in words)} " in folded[0]
    for entry in getattr(synonyms, "entries", None) or ():
        group = [entry.words, *entry.expansions]
        if any(forms & set(words) for words in group) and any(
                named(words) for words in group if not forms & set(words)):
            return None
    return subject


def _told(words) -> bool:
    """A lead that tells the case in a sentence of its own ("Teilzeitkraft arbeitet mehr als vereinbart – …"): a
    lowercase word right after its first noun that is no preposition, article, conjunction or adjective."""
    return (len(words) > 1 and words[0][:1].isupper() and words[0].lower() not in _DETERMINERS
            and words[1].isalpha() and words[1].islower() and words[1] not in _PHRASE_END | _NOT_VERBS
            and words[1].endswith(("t", "en")) and not _ADJECTIVE_RE.search(fold_plain(words[1])))


_NOT_VERBS = frozenset("privat nicht jetzt oft erst sonst bereits meist selbst zuletzt gesamt mitten neben unten oben "
                       "weit direkt komplett fast halt".split())
_DETERMINERS = frozenset("unser unsere unserer mein meine meiner dein deine ihr ihre sein seine eine ein einer "
                         "der die das diese dieser jede jeder".split())


def _asking(question: str) -> str:
    """The sentence that asks: the last one ("Wir haben 30 Mitarbeiter. Wie viel ersetzt uns die AUVA?"), from its
    question word on when a clause before it tells the case ("Servus, mein Kind ist krank – wie viele Tage …?")."""
    sentence = re.split(r"(?<=[.!?])\s+", (question or "").strip())[-1]
    clauses = list(_ASKING_CLAUSE.finditer(sentence))
    return sentence[clauses[-1].end():] if clauses else sentence


# a question word that opens a clause after a dash, colon or comma
_ASKING_CLAUSE = re.compile(r"[–—:,;]\s+(?=(?:wie|was|welche[rsmn]?|bis\s+wann|ab\s+wann)\b)", re.I)


def _institutions(question: str) -> list[str]:
    """The institutions the asking sentence names by their letters (lib/answer/payments.institutions)."""
    return payments.institutions(_asking(question))


def _unnamed_acronym(question: str, texts, synonyms) -> str | None:
    """The institution the question names by its letters (:data:`_ACRONYM_RE`) that none of ``texts`` names,
    itself or through a synonym-table row ("HBGL" for "Höchstbeitragsgrundlage"); else None. Measured on the
    seen gold sets: every such letters-only name the expected entries do not name was asked by a question the
    base cannot answer ("Wie viel ersetzt die AUVA …", "Kurzarbeitsbeihilfe vom AMS")."""
    found = _institutions(question)
    if not found:
        return None
    words = set(re.findall(r"\w+", fold_plain(" ".join(t or "" for t in texts))))
    for acronym in found:
        folded = fold_plain(acronym)
        if folded in words:
            continue
        if any(entry.words == (folded,) and any(all(w in words for w in expansion) for expansion in entry.expansions)
               for entry in getattr(synonyms, "entries", None) or ()):
            continue
        return acronym
    return None


def unvalued_institution(question: str, passages) -> tuple[str, list] | None:
    """An institution named by its letters whose passages hold no amount (lib/answer/payments)."""
    return payments.unvalued_institution(_asking(question), passages)


def unvalued_payment(question: str, valued, synonym_terms=frozenset()) -> str | None:
    """The payment a clause of the asking sentence asks an amount of that the base gives no value for
    (lib/answer/payments.unvalued_payment; "Wie viel Krankengeld zahlt die ÖGK – wie viel Prozent …?" asks it in
    its first clause); ``valued``: payments.valued_words of the active base."""
    return _in_a_clause(question, lambda clause: payments.unvalued_payment(clause, valued, synonym_terms))


def unrated_levy(question: str, units, titled=frozenset()) -> str | None:
    """The levy a clause of the asking sentence asks the rate of that the base values only in other units
    (lib/answer/payments.unrated_levy)."""
    return _in_a_clause(question, lambda clause: payments.unrated_levy(clause, units, titled))


def _in_a_clause(question: str, check):
    sentence = re.split(r"(?<=[.!?])\s+", (question or "").strip())[-1]
    cuts = [0, *(m.end() for m in _ASKING_CLAUSE.finditer(sentence)), len(sentence)]
    return next(filter(None, (check(sentence[start:end]) for start, end in zip(cuts, cuts[1:]))), None)


# the kinds of payment a hyphenated subject may name after what it is paid for ("Homeoffice-Pauschale",
# "Mitfahrer-Zuschlag"), folded
_PAYMENT_KIND_RE = re.compile(r"pauschale|pauschalen|pauschbetrag|pauschbetraege|zuschuss|zuschuesse|zuschlag|"
                              r"zuschlaege|zuschlaegen|zulage|zulagen|praemie|praemien|beihilfe|beihilfen")


_HYPHEN_PAYMENT_RE = re.compile(r"(?<![\w-])(?P<rest>[A-ZÄÖÜ][^\W\d_]+(?:-[A-ZÄÖÜ][^\W\d_]+)*)-"
                                r"(?P<payment>[A-ZÄÖÜ][^\W\d_]+)(?![\w-])")


def _named_together(rest, payment: str, texts, synonyms=None) -> bool:
    """Does one sentence (or title, or table row) of ``texts`` name every part of ``rest`` (or a one-word synonym
    of it: "Überstunden" for "Overtime") and the payment, as a word or a part of one ("Pendlerpauschale",
    "Pauschale für Pendler")?"""
    entries = getattr(synonyms, "entries", None) or ()
    wanted = []
    for piece in rest:
        forms = _forms(fold_plain(piece))
        forms |= {e[0] for entry in entries if len(entry.words) == 1 and entry.words[0] in forms
                  for e in entry.expansions if len(e) == 1}
        wanted.append(forms)
    wanted.append(_forms(fold_plain(payment)))
    # a plural with an umlaut ("Zuschläge", "Zuschüsse") holds the singular's stem with its vowel changed
    wanted = [forms | {re.sub(r"([aou])([^aeiou]*)$", r"\1e\2", f) for f in forms} for forms in wanted]
    for text in texts:
        for sentence in re.split(r"(?<=[.!?;])\s+|\n+", fold_plain(text or "")):
            words = re.findall(r"\w+", sentence)
            if all(any(f in w for f in forms for w in words) for forms in wanted):
                return True
    return False


def _unknown_head(words, lexicon, synonym_terms) -> str | None:
    """The head of a noun phrase (its last noun before a preposition, article or conjunction: "Gebrauchtes
    Leasingauto", "Großes Pendler Pauschale"; each part of a hyphenated one: "Gratis-Firmenparkplatz") when the
    base does not know it, else None."""
    run = []
    for raw in words:
        word = raw.strip("\"'„“”‚‘’()[]{}«»,?!.")
        if word.lower() in _PHRASE_END:
            break
        run.append(word)
    nouns = [w for w in run if w[:1].isupper() and any(c.isalpha() for c in w)]
    if not nouns or any(fold_plain(p) in _PERSON_WORDS or _PERSON_RE.search(fold_plain(p))
                        for w in run for p in re.split(r"[-/]", w)):
        return None          # no noun, or a person's case ("Frau Maier: …"), not a subject
    for piece in re.split(r"[-/]", nouns[-1]):
        folded = fold_plain(piece)
        if (len(piece) < 4 or len(piece) > _MAX_WORD or not piece.isalpha() or sum(c.isupper() for c in piece) > 1
                or folded in _CHAT_WORDS or folded in _GENERIC_HEADS or _ADJECTIVE_RE.search(folded)):
            continue         # abbreviations, adjectives, figures, chat words and letter runs are not checked
        if not known_word(folded, lexicon, synonym_terms):
            return nouns[-1]
    return None
