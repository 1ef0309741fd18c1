"""German text preparation for full-text retrieval with PostgreSQL.

Three spaces of text appear in this module:

* **raw**: the entry or question as written (umlauts, ß, §, en dashes).
* **folded** (:func:`fold`): lower case, ä→ae ö→oe ü→ue ß→ss, accents
  stripped, dashes and quotes plain ASCII, and every § reference followed
  by a joined token (below). Lexicon, compound splitting, stopwords and
  synonyms all work in this space, so "Überstunden" and a typed
  "Ueberstunden" are the same word.
* **search form** (:func:`search_form`): what is handed to PostgreSQL's
  ``german`` configuration. Its Snowball stemmer removes umlaut accents
  itself ("Zuschläge" and "Zuschlag" both become ``zuschlag``) but does
  not know the ae/oe/ue spelling (PostgreSQL 15: "zuschlaege" stays
  ``zuschlaeg``). So every folded word is mapped ae→a, oe→o, ue→u before
  it leaves this module, except "ue" after q or after a vowel ("Quelle",
  "Steuer", "neue"). Index and query go through the same mapping, so they
  always meet; singular and umlaut plural meet in the stemmer.

§ references become tokens: "§ 67 Abs. 1 EStG" folds to
"67 abs 1 estg p67estg", "§§ 67 und 68 EStG" adds ``p67estg p68estg``,
and a bare "§ 67" adds ``p67``. PostgreSQL's parser keeps such a
letters-and-digits word whole, so a question naming "§ 67 EStG" matches
exactly that paragraph, not every "67".

Compound splitting and the index text are in :mod:`compounds`, synonyms and the
full-text query in :mod:`tsquery`.

Stopwords: PostgreSQL drops its German stopwords only in their umlaut
spelling ("für"), not in the search form ("fur"), so this module removes
them itself, plus question words ("wie", "hoch", "welche", ...) in queries.
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# --------------------------------------------------------------------------- folding

_UMLAUT_PAIRS = (("ä", "ae"), ("ö", "oe"), ("ü", "ue"), ("ß", "ss"))
_PUNCT = {
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
    **dict.fromkeys("\u201e\u201c\u201d\u201f\u00ab\u00bb\u2033", '"'),
    **dict.fromkeys("\u201a\u2018\u2019\u201b\u2039\u203a\u2032\u00b4\u0060", "'"),
}
_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]")


@lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    """One non-ASCII character: plain dash/quote, or the letter without its accent."""
    if ch in _PUNCT:
        return _PUNCT[ch]
    return "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))


_LAW_CHARS = r"A-Za-zÄÖÜäöüß"
_NUM = r"\d+[a-z]?(?![\w])"
_NUM_JOIN = r"\s*(?:,|und|u\.|bis|sowie|oder|bzw\.|-|–)\s*"
_QUALIFIER = (
    r"(?:Abs\.?|Absatz|Z\.?|Ziffer|Zif\.|lit\.?|litera|Satz|S\.|Nr\.?|Pkt\.?|Punkt|Tz\.?|TZ|sublit\.?)"
)
_QUAL_VALUE = r"(?:\d+[a-z]?|[a-z])(?![\w])"
_PARA_RE = re.compile(
    r"§§?\s*"
    rf"(?P<nums>{_NUM}(?:{_NUM_JOIN}{_NUM})*)"
    r"(?:\s*ff?\.)?"
    rf"(?:\s*,?\s*{_QUALIFIER}\s*{_QUAL_VALUE}(?:{_NUM_JOIN}{_QUAL_VALUE})*)*"
    rf"(?:\s+(?P<law>[A-ZÄÖÜ][{_LAW_CHARS}]*(?:-[{_LAW_CHARS}]+)*))?"
)
_NUM_FIND = re.compile(r"\d+[a-z]?")


def _is_law_abbreviation(word: str) -> bool:
    """"EStG", "ASVG", "AngG", "B-KUVG": short, at least two capitals."""
    letters = word.replace("-", "")
    return 2 <= len(letters) <= 12 and sum(ch.isupper() for ch in letters) >= 2


def _paragraph_tokens(nums: str, law: str | None) -> list[str]:
    suffix = ""
    if law and _is_law_abbreviation(law):
        suffix = fold_plain(law.replace("-", ""))
    return [f"p{num}{suffix}" for num in _NUM_FIND.findall(nums)]


def _expand_paragraphs(text: str) -> str:
    """Drop the § sign and append one joined token per paragraph number."""
    if "§" not in text:
        return text

    def replace(match: re.Match) -> str:
        body = match.group(0).lstrip("§").strip()
        law = match.group("law")
        if law and not _is_law_abbreviation(law):
            # The capitalised word after the number is ordinary text.
            body = body[: len(body) - len(law)].rstrip()
            extra = " " + law
        else:
            extra = ""
        joined = " ".join(_paragraph_tokens(match.group("nums"), law))
        start = match.start()
        lead = " " if start > 0 and text[start - 1].isalnum() else ""
        return f"{lead}{body} {joined}{extra}"

    return _PARA_RE.sub(replace, text).replace("§", " ")


def fold(text: str) -> str:
    """Normalise German text for matching.

    Lower case; ä→ae, ö→oe, ü→ue, ß→ss; other accents stripped (é→e);
    dashes become "-", typographic quotes become '"' or "'"; § references
    gain a joined token ("§ 67 EStG" -> "67 estg p67estg", see the module
    docstring). Punctuation otherwise stays; :func:`tokens` picks the words.
    """
    if not text:
        return ""
    text = unicodedata.normalize("NFKC", text)
    return _fold_lower(_expand_paragraphs(text).lower())


def fold_plain(text: str) -> str:
    """:func:`fold` without the § tokens: for keys, headings and words compared as written."""
    if not text:
        return ""
    return _fold_lower(unicodedata.normalize("NFKC", text).lower())


# letters NFKD does not decompose (Turkish, Polish, Croatian, Nordic names)
_NAME_TABLE = str.maketrans({"ı": "i", "ł": "l", "đ": "d", "ø": "o", "æ": "ae", "œ": "oe", "ð": "d", "þ": "th"})
_NAME_PAIRS = (("ae", "a"), ("oe", "o"), ("ue", "u"))


def fold_name(text: str) -> str:
    """:func:`fold_plain` for comparing names however they were typed: umlauts and their spelled-out
    forms both reduced to the plain vowel, so 'Müller', 'Mueller', 'MULLER' and 'muller' fold alike
    (the personal-data gate, lib/pii/names.py)."""
    text = fold_plain(text.casefold()).translate(_NAME_TABLE)
    for two, one in _NAME_PAIRS:
        text = text.replace(two, one)
    return text


def _fold_lower(text: str) -> str:
    """Umlauts spelled out, accents stripped, dashes and quotes plain, in NFKC lower-case text."""
    if text.isascii():
        return text
    for umlaut, plain in _UMLAUT_PAIRS:
        text = text.replace(umlaut, plain)
    return _NON_ASCII_RE.sub(lambda m: _fold_char(m.group(0)), text)


WORD_RE = re.compile(r"[a-z0-9]+")
WORD_GROUP_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def tokens(text: str) -> list[str]:
    """The words ([a-z0-9]+) of the folded text, in order."""
    return WORD_RE.findall(fold(text))


@lru_cache(maxsize=200_000)
def search_form(word: str) -> str:
    """Map one folded word to the spelling handed to PostgreSQL.

    ae→a, oe→o, ue→u, except "ue" after q or after a vowel ("quelle",
    "steuer", "neue" stay). See the module docstring for why.
    """
    if "e" not in word:
        return word
    return _SEARCH_FORM_RE.sub(lambda m: m.group(0)[0], word)


_SEARCH_FORM_RE = re.compile(r"ae|oe|(?<![aeiouyq])ue")

# --------------------------------------------------------------------------- stopwords

# PostgreSQL's German stopwords, folded (it drops them only when spelled
# with umlauts, so "fuer"/"fur" would otherwise become lexemes).
PG_GERMAN_STOPWORDS = frozenset("""
aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes anderm andern
anderr anders auch auf aus bei bin bis bist da damit dann der den des dem die das dass derselbe derselben
denselben desselben demselben dieselbe dieselben dasselbe dazu dein deine deinem deinen deiner deines denn derer
dessen dich dir du dies diese diesem diesen dieser dieses doch dort durch ein eine einem einen einer eines einig
einige einigem einigen einiger einiges einmal er ihn ihm es etwas euer eure eurem euren eurer eures fuer gegen
gewesen hab habe haben hat hatte hatten hier hin hinter ich mich mir ihr ihre ihrem ihren ihrer ihres euch im in
indem ins ist jede jedem jeden jeder jedes jene jenem jenen jener jenes jetzt kann kein keine keinem keinen
keiner keines koennen koennte machen man manche manchem manchen mancher manches mein meine meinem meinen meiner
meines mit muss musste nach nicht nichts noch nun nur ob oder ohne sehr sein seine seinem seinen seiner seines
selbst sich sie ihnen sind so solche solchem solchen solcher solches soll sollte sondern sonst ueber um und uns
unse unsem unsen unser unses unter viel vom von vor waehrend war waren warst was weg weil weiter welche welchem
welchen welcher welches wenn werde werden wie wieder will wir wird wirst wo wollen wollte wuerde wuerden zu zum
zur zwar zwischen
""".split())

# Words of questions that say nothing about the topic (folded).
QUESTION_STOPWORDS = frozenset("""
ab beim bitte bzw ca darf duerfen dabei dafuer daran darauf davon derzeit eigentlich erklaere erklaeren
erhaelt erhalte erhalten bekomme bekommt bekommen etc genau geben gibt gilt gelten geregelt heute hoch hoehe
jemand jemandem kommt kommen lang lange momentan muessen oft passiert regelt richtig sag sage sagen sei seien
soll sollen steht stehen stimmt usw viele vielen wann warum weshalb wieso wieviel wieviele wofuer womit woran
worauf worden wozu wurde wurden zb zusteht zustehen aktuell aktuelle aktuellen betraegt betragen unterschied
beispiel abs absatz lit ziffer vgl
""".split())

STOPWORDS = PG_GERMAN_STOPWORDS  # dropped on both the index and the query side


# --------------------------------------------------------------------------- words of the answer engine

# Conflict keys, Notbetrieb passages and follow-up questions compare words as written (fold_plain),
# lightly stemmed, without the question stopwords below.
_PLAIN_WORD_RE = re.compile(r"[^\W_]+")


def light_stem(token: str) -> str:
    """Very light German suffix stripping (at most two suffixes, keeps 4 chars)."""
    for _ in range(2):
        for suffix in ("en", "er", "es", "e", "n", "s"):
            if token.endswith(suffix) and len(token) - len(suffix) >= 4:
                token = token[: -len(suffix)]
                break
        else:
            break
    return token


# Function and question words the answer engine ignores (a superset of the question words, with umlauts).
ANSWER_STOPWORDS = frozenset(
    fold_plain(w)
    for w in """
    der die das des dem den ein eine einer eines einem einen und oder aber auch als
    am an auf aus bei bis durch für gegen im in ins mit nach ob ohne pro je seit um
    unter über von vom vor zu zum zur bzw sowie wenn dass daß so wie was wann wer wo
    welche welcher welches welchen welchem warum wieso weshalb woher wohin wieviel
    wieviele ist sind war waren wird werden wurde wurden sein kann können muss müssen
    darf dürfen soll sollen sollte gilt gelten galt gibt geben gab hat haben hatte
    beträgt betragen hoch viel viele lange genau bitte mir mich ich man wir uns sie
    es er ihn ihm ihr ihre sich nicht noch nur schon da dann dort hier dies diese
    dieser dieses diesem diesen dazu dafür dabei davon damit darauf darüber daran
    darin hierzu hierfür hierbei ebenso ebenfalls dasselbe derselbe dieselbe denn
    doch mal etwa ab zwischen alle allen aller jeweils einmal gleich gleichem neu
    """.split()
)


def plain_vowels(folded: str) -> str:
    """A folded word with its folded umlauts as plain vowels: "bezueg" (Bezügen) → "bezug", as "Bezug" folds;
    for comparing a plural or an umlauted form with its stem, never for display."""
    return folded.replace("ae", "a").replace("oe", "o").replace("ue", "u")


def word_tokens(text: str) -> list[str]:
    """Words as written (letters and digits, any script), in order."""
    return _PLAIN_WORD_RE.findall(text or "")


def content_words(tokens: list[str]) -> list[str]:
    """Tokens of at least three letters that are neither numbers nor :data:`ANSWER_STOPWORDS`."""
    return [t for t in tokens if len(t) >= 3 and not t.isdigit() and fold_plain(t) not in ANSWER_STOPWORDS]
