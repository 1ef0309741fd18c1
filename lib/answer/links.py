"""Links in an answer: only those that occur in the cited blocks stay; any other is dropped.

A model can write a link to any web address next to a perfectly valid citation (a prompt-injected entry or a
compromised model server can plant one). The rule here: an answer may contain only links whose address occurs
in the text of a block it cites. A Markdown link ``[label](address)`` or image ``![label](address)`` with any
other address becomes its label, an autolink ``<address>`` or a bare address is removed. What was dropped is
returned, so the caller keeps it in the question log. The chat panel's renderer (static/src/markdown.js)
applies the same rule on its side: only addresses the server lists as allowed become clickable.
"""
from __future__ import annotations

import re
from typing import Iterable

_TRAILING = ".,;:!?'\"’”)»"
# [label](address "title") and ![label](address); the address may be wrapped in <...>
_MD_LINK_RE = re.compile(r"(!?)\[([^\]\n]{0,500})\]\(\s*<?((?:[^\s()<>]|\([^\s()<>]{0,200}\)){1,2000})>?(?:\s+\"[^\"\n]{0,300}\")?\s*\)")
_AUTOLINK_RE = re.compile(r"<((?:[a-zA-Z][a-zA-Z0-9+.-]{1,20}:|www\.)[^\s<>]{1,2000})>")
_BARE_RE = re.compile(r"(?<![\w/.@-])(?:https?://|ftp://|www\.)[^\s<>\[\]()\"'`]{1,2000}", re.IGNORECASE)


def _norm(address: str) -> str:
    address = address.strip().rstrip(_TRAILING)
    lowered = address.lower()
    for scheme in ("https://", "http://"):
        if lowered.startswith(scheme):
            address = address[len(scheme):]
            break
    return address.rstrip("/").lower()


def addresses(text: str) -> list[str]:
    """Every link address in ``text`` (Markdown links and images, autolinks, bare addresses), in order."""
    found: list[str] = []
    text = text or ""
    for match in _MD_LINK_RE.finditer(text):
        found.append(match.group(3))
    rest = _MD_LINK_RE.sub(" ", text)
    for match in _AUTOLINK_RE.finditer(rest):
        found.append(match.group(1))
    rest = _AUTOLINK_RE.sub(" ", rest)
    for match in _BARE_RE.finditer(rest):
        found.append(match.group(0).rstrip(_TRAILING))
    return found


def allowed_addresses(block_texts: Iterable[str]) -> set[str]:
    """The normalised addresses of the cited blocks' texts (scheme, case and a trailing "/" do not matter)."""
    return {_norm(a) for text in block_texts for a in addresses(text)}


def keep_cited_links(answer: str, block_texts: Iterable[str]) -> tuple[str, list[str]]:
    """``(answer without foreign links, dropped addresses)``; ``block_texts`` are the texts of the cited blocks.

    A Markdown link or image with a foreign address keeps its label as plain text; an autolink or a bare
    foreign address is removed. Addresses that occur in a cited block stay as they are."""
    if not answer or not any(marker in answer for marker in ("](", "://", "www.", "<")):
        return answer, []
    allowed = allowed_addresses(block_texts)
    dropped: list[str] = []
    answer = answer.replace("\x00", "")   # the shield marker below; never part of an answer

    def allowed_or_drop(address: str) -> bool:
        if _norm(address) in allowed:
            return True
        dropped.append(address)
        return False

    def md_link(match: re.Match) -> str:
        return match.group(0) if allowed_or_drop(match.group(3)) else match.group(2)

    def autolink(match: re.Match) -> str:
        return match.group(0) if allowed_or_drop(match.group(1)) else ""

    def bare(match: re.Match) -> str:
        whole = match.group(0)
        address = whole.rstrip(_TRAILING)
        return whole if allowed_or_drop(address) else whole[len(address):]

    # Markdown links first (their addresses are not bare ones); the kept ones are shielded from the next passes
    kept: list[str] = []

    def shield(text: str) -> str:
        kept.append(text)
        return f"\x00{len(kept) - 1}\x00"

    text = _MD_LINK_RE.sub(lambda m: shield(md_link(m)) if _norm(m.group(3)) in allowed else md_link(m), answer)
    text = _AUTOLINK_RE.sub(lambda m: shield(autolink(m)) if _norm(m.group(1)) in allowed else autolink(m), text)
    text = _BARE_RE.sub(bare, text)
    text = re.sub(r"\x00(\d+)\x00", lambda m: kept[int(m.group(1))], text)
    text = re.sub(r"[ \t]{2,}", " ", text)
    return text, dropped
