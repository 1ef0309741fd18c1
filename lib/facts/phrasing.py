"""What a question says in everyday words, written as the rows of the Kernwerte say it: "nach der Entbindung" is
"nach der Geburt", "darf nicht mehr arbeiten" (beside a pregnancy) the Beschäftigungsverbot, "nur unfallversichert"
geringfügig, "in welchem Rahmen" how much; and the key words a question names without saying them
(:func:`implied_key_words`: the "Dauer" of "wie lange dauert", the default "Inland"). Used by the value questions'
parser (question.py) before it reads the words. Pure; nothing here imports Odoo.
"""
from __future__ import annotations

import re

from ..text.countries import ANY_COUNTRY

# the time around a birth, told in everyday words: "vor dem errechneten Termin", "nach der Entbindung" are the
# rows "… vor/nach der Geburt"; "darf nicht (mehr) arbeiten" is the Beschäftigungsverbot, when the question speaks
# of a pregnancy or a birth
_BIRTH_CONTEXT = re.compile(r"schwanger|geburt|entbind|niederkunft|baby|zwilling|drilling|mehrling|mutter", re.I)
_BIRTH_SIDE = re.compile(r"\b(vor|nach)\s+(?:dem|der)\s+(?:(?:errechneten|voraussichtlichen|erwarteten|berechneten|"
                         r"geplanten)\s+)?(?:(?:geburts|entbindungs)?termin|entbindung|niederkunft|geburt)\b", re.I)
_NOT_WORKING = re.compile(r"\b(?:nicht|nimmer)\s+(?:mehr\s+)?(?:arbeiten|beschäftigt\s+werden|beschäftigen|eingesetzt\s+werden"
                          r"|einsetzen)\b|\barbeiten\s+(?:nicht|nimmer)\b", re.I)
# "wie viele Wochenstunden muss sie mindestens arbeiten / müssen mindestens bleiben": the Mindestarbeitszeit
_MIN_WORK = re.compile(r"\bmindestens\s+(?:noch\s+)?(?:arbeiten|bleiben|verbleiben|übrig\s+bleiben)\b", re.I)
# no agreement of its own: the rule as the law states it, which is what a row says ("wenn im Vertrag nix
# Besonderes steht", "ohne abweichende Vereinbarung")
_NO_AGREEMENT = re.compile(r",?\s*\b(?:wenn|falls)\s+(?:im\s+(?:\w*vertrag|KV)\s+)?(?:nix|nichts)\s+(?:Besonderes|anderes|"
                           r"Abweichendes|extra)\s+(?:steht|vereinbart\s+(?:ist|wurde)|geregelt\s+ist)\b"
                           r"|\b(?:ohne|mangels)\s+(?:besondere[rn]?|abweichende[rn]?|andere[rn]?|vertragliche[rn]?)\s+"
                           r"(?:Vereinbarung|Regelung)\b", re.I)
_MANNER = re.compile(r"(?<![\w-])(?:pauschale[nrms]?|zusätzliche[nrms]?)\s+(?=[A-ZÄÖÜ])|\bzusätzlich\b(?!\w)")
# only accident insurance, not fully insured: what "geringfügig" means in the ASVG
_MARGINAL = re.compile(r"\bnur\s+unfallversichert\b|\bnicht\s+voll\s*versichert\b|\bnicht\s+(?:voll\s+)?"
                       r"(?:sozial|kranken|pensions)versicherungspflichtig\b", re.I)
# "Bis zu welchem Monatsverdienst …": the asked sum, said as a pay
_ASKED_PAY = re.compile(r"\b((?:bis\s+zu|ab|bis)\s+welche[mrn]?\s+)(Monats|Jahres)?(?:verdienst|lohn)\b", re.I)
# "In welchem Rahmen / Ausmaß darf … herabgesetzt werden?": asks how much
_HOW_FAR = re.compile(r"\bin\s+welche[mn]\s+(?:Rahmen|Ausma(?:ß|ss)|Umfang)\b", re.I)
# "im Bereich zwischen € 25.000 und € 50.000", "der Teil zwischen …": the band the row names, no word of its own
_BAND_LEAD = re.compile(r"\b(?:im\s+Bereich|(?:der|den|dem)\s+Teil)\s+(?=zwischen\b)", re.I)
# a chat lead-in before the question ("Kurze Rückfrage aus der Steuerberatungskanzlei: …", "Frage von der
# Buchhaltung: …"): who asks, not what is asked
_CHAT_LEAD = re.compile(r"^\s*(?:(?:eine|kurze|kleine|schnelle|dringende|noch\s+eine)\s+)*(?:Rück|Nach|An)?[Ff]rage"
                        r"(?:\s+(?:aus|von|vo[nm]|der|dem|des|unserer|unserem|meiner|meinem|zur|zum|an)\b[^:?]{0,60})?:\s*"
                        r"(?=\S)", re.I)
# "nach wie langer Zeit": how long; "pro Nacht" beside a Nächtigung is the Nächtigungsgeld's own unit (no
# Nachtarbeit)
_HOW_LONG_TIME = re.compile(r"\bnach\s+wie\s+lange[rn]?\s+Zeit\b", re.I)
_PER_NIGHT = re.compile(r"\b(?:pro|je)\s+Nacht\b", re.I)
_LODGING = re.compile(r"nächtig|naechtig|übernacht|uebernacht", re.I)
# Austrian dialect of a quick chat question: "Bis wann muass i …?"
_DIALECT = ((re.compile(r"\bmuass\b", re.I), "muss"), (re.compile(r"\b(?-i:i)\b(?=\s+\w)"), "ich"),
            (re.compile(r"\bned\b|\bnet\b(?=\s+\w)", re.I), "nicht"), (re.compile(r"\bkriag\b", re.I), "kriege"))


def in_the_rows_words(text: str) -> str:
    """``text`` with the everyday phrasings above replaced by the rows' words."""
    for pattern, word in _DIALECT:
        text = pattern.sub(word, text)
    text = _BAND_LEAD.sub("", _CHAT_LEAD.sub("", _HOW_LONG_TIME.sub("wie lange", text)))
    if _LODGING.search(text):
        text = _PER_NIGHT.sub(" pro Nächtigung ", text)
    text = _HOW_FAR.sub("wie viel", _MIN_WORK.sub(" Mindestarbeitszeit ", _NO_AGREEMENT.sub(" ", text)))
    # "die pauschale Dienstgeberabgabe", "zusätzlich": how a value is raised, not what it is
    text = _MANNER.sub(" ", text)
    text = _ASKED_PAY.sub(lambda m: f"{m.group(1)}{m.group(2) or ''}betrag", _MARGINAL.sub(" geringfügig ", text))
    if _BIRTH_CONTEXT.search(text):
        text = _NOT_WORKING.sub(" Beschäftigungsverbot ", _BIRTH_SIDE.sub(lambda m: f" {m.group(1)} der Geburt ", text))
        text = re.sub(r"\bab\s+wann\s+(?=vor\s+der\s+Geburt\b)", "wie lange ", text)   # "ab wann vor dem Termin"
    return text


# "wie lange dauert …" names the row "Dauer" by its verb
_HOW_LONG_LASTS = re.compile(r"\bwie\s+lange\s+(?:\w+\s+){0,6}?(?:dauert|dauern|andauern|andauert)\b", re.I)
_DURATION_KEY_WORDS = frozenset({"dauer"})
# "Inland" in a row's label is the default scope of an Austrian base: a question that names no other country (and
# no hour: "pro Stunde" selects the Taggeld per hour, whose row has words of its own) need not name it
_INLAND_KEY_WORDS = frozenset({"inland", "inlaendisch"})
_ABROAD_OR_HOURLY = re.compile(rf"\bausl(?:and|änd|aend)\w*|\bauslands\w*|\b(?:{ANY_COUNTRY})\b|\bstunde\w*|\bstündlich\w*",
                               re.I)


def implied_key_words(text: str) -> frozenset:
    """Key words of a row the question names without saying them: the "Dauer" of "wie lange dauert …", the
    "Inland" of a question that names no other country and no hour."""
    words = _DURATION_KEY_WORDS if _HOW_LONG_LASTS.search(text) else frozenset()
    return words if _ABROAD_OR_HOURLY.search(text) else words | _INLAND_KEY_WORDS
