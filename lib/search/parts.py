"""A question that asks two things, split into questions that each ask one.

"KommSt-Satz und DB-Satz 2025?" is answered best as "KommSt-Satz 2025?" and "DB-Satz 2025?": the facts answer
each at once, and a small model that is given one thing to find does not stop after the first. :func:`split`
finds the "und"/"sowie" of the asking sentence that joins two asks and writes each part as a question of its own:

- shared material is copied into each part: the sentences before the asking one ("DN verdient 2025 € 7.000. …"),
  a lead-in before a colon or dash ("ATZ: …", "Angestellter im 16. DJ: …") and, when two nouns share it, the rest
  of the sentence ("DB und KommSt – Sätze 2025?" → "DB – Sätze 2025?", "KommSt – Sätze 2025?");
- two prepositional phrases share the words before them ("HBGl 2025 für laufende Bezüge und für die SZ");
- a year named in one part only is carried to a part that names none;
- a second ask that only names another noun ("… und wie viel der Dienstgeber?") takes the first ask's words.

Not split: words joined inside a compound ("DN- und DG-Anteil"), ranges ("zwischen 20 und 40 km", "280 und 300"),
an "und" inside brackets or quotes, a part without a content word. Pure and linear in the question's length.
"""
from __future__ import annotations

import re

MAX_PARTS = 3

# words a second ask begins with
_ASK_START = re.compile(
    r"(?:wie|wieviel\w*|welche[rsmn]?|was|wann|wo|wer|wem|wen|wieso|warum|weshalb|ob|bis|ab|seit|binnen|"
    r"innerhalb|gibt|gilt|gelten|zählt|zählen|steht|stehen|muss|müssen|darf|dürfen|kann|können|ist|sind|wird|"
    r"werden|bekommt|bekommen|braucht|brauchen|fällt|fallen|bleibt|bleiben|hat|haben|besteht|entsteht|reicht)$",
    re.I)
_PREPOSITIONS = frozenset(
    "für bei im in am an auf aus nach vor mit ohne je pro über unter zum zur vom von ab bis seit während".split())
_ARTICLES = frozenset("der die das den dem des ein eine einer einem einen eines".split())
_JOIN = re.compile(r"(,\s*)?\b(und|sowie)\s+", re.I)
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
_LEAD = re.compile(r"^(.{3,120}?(?::|\s[–—-]))\s+")           # "ATZ: ", "DB und KommSt – " is not a lead (see split)
_WORD = re.compile(r"[^\W_][\w.\-/²%€]*", re.U)
_END = "?"
_STOP = re.compile(r"[.?!](?=\s+[A-ZÄÖÜ])")
_ABBREVIATIONS = frozenset(
    "mtl tgl jährl wöchentl stfr lstfr amtl max min ca bzw inkl exkl zzgl abzgl gem lt vgl abs nr lit usw etc sog "
    "ggf evtl insb std mio mrd tsd dj va idr iHv".lower().split())
_ANAPHORS = frozenset("er sie ihm ihr ihn da dies davon dafür danach dabei darauf dort dieser diese dieses "
                      "derselbe".split())
_GENERIC = frozenset("monat monate jahr jahre tag tage woche wochen betrag höchstbetrag zeit frist summe grenze wert "
                     "prozent euro".split())
_IMPERATIVES = frozenset("ignoriere ignorier vergiss gib nenne nenn erfinde spiel spiele lass antworte antwort schreib "
                         "schreibe sag sage zeig zeige mach mache liste tu vergesse bestätige bestätig erkläre erklär "
                         "beschreibe formuliere".split())
_SUBORDINATE = re.compile(r",\s+(?:der|die|das|dem|den|deren|dessen|wenn|weil|dass|ob|um|damit|sodass|falls|obwohl)\b",
                          re.I)
_EACH = re.compile(r"\bjeweils\b", re.I)
# an asking sentence that opens with its condition ("Wenn nur ich daheim bleibe und mein Mann gar nicht, …")
_CONDITION_START = re.compile(r"^(?:wenn|falls|sofern|solange|obwohl|weil)\b", re.I)
# the two Sonderzahlungen: taxed, limited and contributed as one ("Urlaubsgeld und Weihnachtsgeld")
_SPECIAL_PAYMENT = re.compile(r"(?:urlaubs|weihnachts)(?:geld|zuschuss|remuneration|beihilfe|gehalt)\w*$|1[34]\.", re.I)
_NOT_CARRIED = frozenset("eintritt geboren seit jahrgang von vom geburt".split())


def split(question: str) -> list[str]:
    """The question's parts (at most :data:`MAX_PARTS`), or ``[question]`` when it asks one thing."""
    text = " ".join((question or "").split())
    if not text or len(text) > 2000:
        return [question]
    context, asking = _asking_sentence(text)
    verbs = [w.lower().split("-")[0] for w in _words(asking)]
    if (verbs[:1] and verbs[0] in _IMPERATIVES) or ("?" not in asking and (
            len(verbs) > 14 or any(v in _IMPERATIVES for v in verbs))):
        return [question]               # an instruction ("Ignoriere … und nenne …") is no pair of asks
    lead, body = _lead(asking)
    parts = _split_body(body)
    if len(parts) < 2 and lead and len(_words(lead)) <= 6:
        # the lead-in itself may hold the coordination ("DB und KommSt – Sätze 2025?")
        parts = _split_body(asking)
        lead = ""
    if len(parts) < 2 and lead and _EACH.search(body):
        # "Mehrstundenzuschlag bei Teilzeit und Zuschlag für Überstunden – wie viel Prozent jeweils?": the ask
        # after the lead-in goes to each of its two subjects
        subjects = _split_body(lead.rstrip(":–—- ").strip())
        if len(subjects) == 2:
            ask = re.sub(r"\s+(?=[?.!]$)", "", " ".join(_EACH.sub(" ", body).split()))
            parts, lead = [f"{subject} – {ask}" for subject in subjects], ""
    if len(parts) < 2:
        parts = _split_dash(asking)
        lead = "" if len(parts) > 1 else lead
    if len(parts) < 2:
        return [question]
    if not (context or lead) and (any(w.lower() in _ANAPHORS for w in _words(parts[1]))
                                  or not all(_own_noun(p) for p in parts)):
        # "Urlaubsanspruch … und wann verjährt er?", "… steuerfrei und bis zu welchem Betrag im Monat?": the
        # second part needs the first
        return [question]
    parts = [parts[0]] + [_complete_ellipsis(parts[0], part) for part in parts[1:]]
    parts = _carry_year(parts)
    out = [" ".join(filter(None, [context, lead, _question_mark(p, capital=not lead)])) for p in parts[:MAX_PARTS]]
    return out if len(set(out)) == len(out) else [question]


def _asking_sentence(text):
    """(sentences before, the sentence that asks): the last sentence with a question mark, else the last one."""
    # a full stop after an ordinal ("im 16. DJ"), one letter or an abbreviation ("mtl. HBGl") ends no sentence
    cuts = [m.end() for m in _STOP.finditer(text) if m.group(0) != "." or _ends_sentence(text[max(0, m.start() - 20):m.start()])]
    sentences, start = [], 0
    for cut in cuts:
        sentences.append(text[start:cut].strip())
        start = cut
    sentences.append(text[start:].strip())
    sentences = [s for s in sentences if s]
    # "Max. Sachbezug …": a short piece before a full stop is an abbreviation, not a sentence
    merged = []
    for sentence in sentences:
        if merged and len(_words(merged[-1])) < 3:
            merged[-1] += " " + sentence
        else:
            merged.append(sentence)
    sentences = merged
    asking = next((i for i in range(len(sentences) - 1, -1, -1) if "?" in sentences[i]), len(sentences) - 1)
    return " ".join(sentences[:asking]), " ".join(sentences[asking:])


def _ends_sentence(before):
    word = re.search(r"[\w.]*$", before).group(0)
    if re.fullmatch(r"\d{1,2}", word) or re.fullmatch(r"[A-Za-zÄÖÜäöü]", word):
        return False
    return word.lower() not in _ABBREVIATIONS


def _lead(sentence):
    """(lead-in, rest): "Austritt: Frist … und Frist …" → ("Austritt:", "Frist … und Frist …")."""
    m = _LEAD.match(sentence)
    if not m or not _WORD.search(sentence[m.end():]):
        return "", sentence
    return m.group(1), sentence[m.end():]


def _split_body(body):
    """The parts of one asking clause, or [body]."""
    for m in _JOIN.finditer(body):
        left, right = body[:m.start()].strip(), body[m.end():].strip()
        if not _joinable(body, m, left, right):
            continue
        parts = _parts(left, right)
        if parts:
            # a third ask after another "und" ("…, und …, und …") stays with its part: at most one split per clause
            return parts
    return [body]


def _joinable(body, m, left, right):
    before = body[:m.start()].rstrip()
    if not left or not right or before.endswith("-"):
        return False                    # "DN- und DG-Anteil"
    if body[:m.start()].count("(") > body[:m.start()].count(")") or body[:m.start()].count('"') % 2:
        return False
    lw, rw = _words(left), _words(right)
    if not lw or not rw or rw[0].lower() in ("ohne", "zwar", "so"):
        return False
    if any(w.lower() in ("zusammen", "gemeinsam", "insgesamt") for w in rw[:4]):
        return False                    # "Urlaubszuschuss und Weihnachtsremuneration 2025 zusammen": one sum
    if any(w.lower() in ("gegenseitig", "einander", "miteinander", "untereinander", "abwechselnd") for w in rw):
        return False                    # "Wie oft dürfen sich Mama und Papa … gegenseitig ablösen?": one subject
    if len(lw) >= 2 and lw[-2].lower() in ("pro", "je") and len(rw) <= 2:
        return False                    # "pro Kind und Monat": one basis of a rate
    second = next((w for w in rw if w.lower() not in _ARTICLES), "")
    if _SPECIAL_PAYMENT.match(lw[-1]) and _SPECIAL_PAYMENT.match(second):
        return False                    # "Urlaubsgeld und Weihnachtsgeld": the Sonderzahlungen, one sum, one limit
    if lw[-1][0].isdigit() and rw[0][0].isdigit():
        return False                    # "280 und 300 €", "20 und 40 km"
    if any(w.lower() == "zwischen" for w in lw[-3:]):
        return False
    return _content(lw) and _content(rw)


def _parts(left, right):
    rw = _words(right)
    first = rw[0].lower()
    if (_SUBORDINATE.search(left) or _CONDITION_START.match(left)) and not _ASK_START.match(first):
        return None                     # "…, der schon 30 Jahre da ist und Mo–Fr arbeitet?": inside a clause
    if _ASK_START.match(first) and not (first in ("ab", "bis", "seit") and len(rw) > 1 and rw[1][0].isdigit()):
        return [left, right]            # "… und wie viele Wochen …?", "… und steht ihm … zu?"
    if first in _PREPOSITIONS and len(rw) > 1 and _ASKING_WORD.fullmatch(rw[1]):
        return [left, right]            # "… und mit welchem Satz fällt die KommSt an?": an ask of its own
    if first in _PREPOSITIONS:
        # "für laufende Bezüge und für die SZ": the second phrase takes the place of the first
        head = _head_before(left, first)
        if not head:
            return None
        _noun, rest_r = _leading_noun(right[len(rw[0]):].strip(), skip_articles=True)
        # "bei LSt und bei SV behandelt?": a verb after the second phrase belongs to both
        return [left + rest_r if _light(rest_r) else left, head + " " + right]
    noun_r, rest_r = _leading_noun(right)
    if not noun_r:
        return [left, right] if any(_nounish(w) for w in rw) else None
    if _is_noun_phrase(left):
        # "DB und KommSt – Sätze 2025?", "KommSt-Satz und DB-Satz 2025?": the rest after the second noun is shared
        return [left + rest_r, right]
    head, noun_l = _trailing_noun(left)
    lw = _words(left)
    if head and noun_l and (_light(rest_r) or (_ASK_START.match(lw[0]) or lw[0].lower().startswith("gibt"))
                            and len(_words(noun_l)) <= 2 and _words(head)[-1].lower() in _PREPOSITIONS | _ARTICLES):
        # "Wie werden DB und KommSt berechnet?", "gibt's bei DB und KommSt einen Freibetrag?": the words before
        # the first noun and after the second are shared
        return [left + rest_r, head + " " + right]
    after = _words(rest_r)
    if not after or after[0].lower() in _PREPOSITIONS | _ARTICLES or after[0][0].isdigit():
        return [left, right]            # two asks, each with its own noun ("Schutzfrist … und Mindestdauer …")
    return None                         # "SEG-Zulagen und Nachtzuschläge sind …": one subject of two nouns


_ASKING_WORD = re.compile(r"welche[mnrs]?|wie|was|wann|wo|wieviele?", re.I)
# a value ask and a yes/no ask after a dash ("Welcher CO2-Grenzwert ist maßgeblich – kommt der begünstigte Satz in
# Frage?")
_DASH_ASK = re.compile(r"\s[–—]\s+(?=(?:kommt|kommen|gilt|gelten|ist|sind|zählt|zählen|fällt|fallen|bleibt|bleiben|"
                       r"muss|müssen|darf|dürfen|kann|können|gibt|steht|stehen|greift|greifen|reicht)\b)", re.I)


def _split_dash(body):
    """[value ask, yes/no ask] when a dash joins them, else [body]."""
    m = _DASH_ASK.search(body)
    if not m:
        return [body]
    left, right = body[:m.start()].strip(), body[m.end():].strip()
    if not any(_ASKING_WORD.fullmatch(w) for w in _words(left)) or not right.endswith("?") or len(_words(right)) < 3:
        return [body]
    return [left, right]


def _own_noun(part):
    return any(_nounish(w) and w.lower().strip(".") not in _GENERIC and not _YEAR.fullmatch(w)
               for w in _words(part))


def _words(text):
    return _WORD.findall(text)


def _content(words):
    return any((len(w) > 2 or w.isupper()) and w.lower() not in _ARTICLES and w.lower() not in _PREPOSITIONS
               for w in words)


def _nounish(word):
    return bool(word) and (word[0].isupper() or "-" in word[1:]) and word.lower() not in _ARTICLES


def _leading_noun(text, skip_articles=False):
    """(the noun phrase that opens ``text``, the rest with its leading space); abbreviated adjectives before it
    ("amtl. km-Geld") and, with ``skip_articles``, an article belong to it."""
    end, found = 0, False
    for m in _WORD.finditer(text):
        word = m.group(0)
        if not found and (word.endswith(".") and word[:-1].lower() in _ABBREVIATIONS
                          or skip_articles and word.lower() in _ARTICLES):
            end = m.end()
            continue
        if _nounish(word) and not _YEAR.fullmatch(word) and text[end:m.start()].strip() == "":
            end, found = m.end(), True
            continue
        break
    return (text[:end], text[end:]) if found else ("", text)


def _trailing_noun(text):
    """(words before, the noun phrase that ends ``text``)."""
    words = list(_WORD.finditer(text))
    start = None
    for m in reversed(words):
        if _nounish(m.group(0)) and not _YEAR.fullmatch(m.group(0)):
            start = m.start()
            continue
        break
    if start is None or start == 0:
        return "", ""
    return text[:start].strip(), text[start:].strip()


def _is_noun_phrase(text):
    """Only nouns (and an adjective before them): "DB", "Taggeld Inland", "Großes Pendlerpauschale"."""
    words = _words(text)
    if not words or len(words) > 4:
        return False
    return all(_nounish(w) or (i == 0 and w[0].isupper()) for i, w in enumerate(words)) and not any(
        _YEAR.fullmatch(w) or w.lower() in _PREPOSITIONS for w in words)


def _light(rest):
    """Material after a second noun that both nouns share: punctuation, a year, a verb at the end."""
    words = _words(rest)
    return len(words) <= 2 and not any(
        (_nounish(w) or w.lower() in _PREPOSITIONS) for w in words if not _YEAR.fullmatch(w))


def _head_before(text, preposition):
    """``text`` up to its last ``preposition`` ("HBGl 2025 für laufende Bezüge", "für" → "HBGl 2025")."""
    found = None
    for m in re.finditer(r"\b" + re.escape(preposition) + r"\b", text, re.I):
        found = m.start()
    return text[:found].strip() if found else ""


def _carry_year(parts):
    """A year that ends one part ("… für den SB Dienstwohnung 2024?") and no other year: carried to the others."""
    years = []
    for part in parts:
        m = re.search(r"(\w+)\s+((?:19|20)\d{2})\W*$", part)
        years.append([m.group(2)] if m and m.group(1).lower() not in _NOT_CARRIED else [])
    if any(_YEAR.search(p) and not y for p, y in zip(parts, years)):
        return parts
    named = {y for ys in years for y in ys}
    if len(named) != 1:
        return parts
    year = named.pop()
    out = []
    for part, ys in zip(parts, years):
        if not ys and not _YEAR.search(part):
            stripped = part.rstrip(" ?")
            part = stripped + " " + year
        out.append(part)
    return out


_ELLIPSIS = re.compile(r"^(?P<ask>(?:\w+\s+){1,2}?)(?P<article>der|die|das|den|dem)\s+"
                       r"(?P<noun>[A-ZÄÖÜ][\w-]*(?:\s+[A-ZÄÖÜ][\w-]*)?)\s*\??$")


# a second ask that is only a noun phrase with its own head ("der Anteil des Dienstgebers an den SV-Beiträgen?")
_SAME_HEAD = re.compile(r"^(?P<article>der|die|das|den|dem)\s+(?P<noun>[A-ZÄÖÜ][\w-]*)\s+\S")


def _complete_ellipsis(first, second):
    """A second ask that only names another noun ("… zahlt 2025 der Dienstnehmer insgesamt … und wie viel der
    Dienstgeber?"): the first ask with that noun in place of the first's after the same article ("Wie viel Prozent
    SV zahlt 2025 der Dienstgeber insgesamt …"); else ``second``."""
    same = _SAME_HEAD.match(second.strip())
    if same:
        # "Wie viel Prozent machen 2025 bei vollem AV der Anteil des Dienstnehmers und der Anteil des Dienstgebers
        # …?": the second names the same head as the first's subject, the first's ask and case go with it
        head = re.search(rf"\b{same.group('article')}\s+{re.escape(same.group('noun'))}\b", first, re.I)
        if head and head.start() > 0:
            return first[:head.start()] + second.strip()
        return second
    m = _ELLIPSIS.match(second.strip())
    if not m or m.group("ask").split()[0].lower() != (_words(first) or [""])[0].lower():
        return _carry_predicate(first, second)
    target = re.search(rf"\b{m.group('article')}\s+[A-ZÄÖÜ][\w-]*", first)
    if not target:
        return second
    return first[:target.start()] + f"{m.group('article')} {m.group('noun')}" + first[target.end():]


# what the first ask says of its subject at its end ("… sind die Überstundenzuschläge steuerfrei?") and a second ask
# without a verb of its own ("und bis zu welchem Betrag die SEG-Zulagen?"), which says it of its subject too
_PREDICATE = re.compile(r"\b(\w+(?:frei|pflichtig))\s*[?.!]?\s*$", re.I)
_VERBS = re.compile(r"\b(?:ist|sind|war|waren|gilt|gelten|galt|beträgt|betragen|bleibt|bleiben|darf|dürfen|kann|können|"
                    r"muss|müssen|wird|werden|zahlt|zahlen|bekommt|bekommen|gibt|steht|stehen|fällt|fallen|hat|haben)\b"
                    r"|\w+(?:frei|pflichtig)\b", re.I)


def _carry_predicate(first, second):
    """A verbless second ask takes the first's predicate: "bis zu welchem Betrag die SEG-Zulagen steuerfrei?"."""
    predicate = _PREDICATE.search(first)
    if not predicate or _VERBS.search(second) or not _names_a_subject(second):
        return second
    return second.strip().rstrip(" ?.!") + " " + predicate.group(1)


_BASIS_NOUNS = frozenset("arbeitstag arbeitstage tag tage kalendertag werktag monat monate jahr jahre woche wochen "
                         "stunde stunden betrag höchstbetrag".split())


def _names_a_subject(part):
    """A noun of the part beyond the kind or basis of the value it asks for ("bis zu welchem Betrag pro
    Arbeitstag" names none: it asks on about the first part's subject, whatever the predicate)."""
    return any(w[:1].isupper() and w.lower() not in _GENERIC | _BASIS_NOUNS for w in _words(part)[1:])


def _question_mark(part, capital=True):
    part = part.strip().rstrip(",;")
    if capital:
        part = part[:1].upper() + part[1:]     # "… und wie lange …?" → "Wie lange …?" (not after "ATZ: ")
    return part if part.endswith(("?", ".", "!")) else part + _END
