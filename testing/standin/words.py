"""The stand-in's own word helpers: folding, stopwords, content words, token estimate.

Kept apart from ``lib/text/german.py`` on purpose: the double must not share code with the
product it checks, so a bug in the product's folding cannot hide itself in the tests.
"""
from __future__ import annotations

import math
import re

_FOLD = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss"})

# Function words of four or more letters (after folding) that carry no topic.
STOPWORDS = frozenset("""
aber alle allem allen aller alles also anderen andere anderer auch auf aus bei beim
bereits bis bitte bzw dabei dadurch dafuer damit dann darf darueber das dass davon dem den
denen denn der deren des dessen die dies diese diesem diesen dieser dieses doch dort durch
eine einem einen einer eines einmal etwa etwas euch fuer gegen gibt gilt habe haben hat
hatte hier hoch hoehe ihnen ihre ihrem ihren ihrer ihres immer jede jedem jeden jeder jedes
jetzt kann kein keine keinem keinen keiner koennen konnte lassen machen mehr mein meine
meinem meinen meiner mich mir muss muessen nach neben nicht noch nur oder ohne sehr sein
seine seinem seinen seiner seit sich sind soll sollen sollte sowie ueber unter viel viele
vom von vor waere wann warum was weil welche welchem welchen welcher welches wenn werden
wessen wie wieder wieviel wird wurde wurden zwischen zum zur
""".split())


def fold(text: str) -> str:
    """Lower-case and fold umlauts and ß (``Überstunden`` -> ``ueberstunden``)."""
    return text.lower().translate(_FOLD)


def content_words(text: str) -> set[str]:
    """Folded words of at least four letters that are not stopwords."""
    words = re.findall(r"[^\W\d_]+", fold(text))
    return {w for w in words if len(w) >= 4 and w not in STOPWORDS}


def estimate_tokens(text: str) -> int:
    """Characters / 3.5, rounded up (same rule as ``lib.llm.tokens``)."""
    return math.ceil(len(text) / 3.5) if text else 0
