"""Checks of what a request brings before anything is written: the JSON body, free text, the asking rate.

Every failure is a ``400 Bad Request`` (or ``429``) with a German message, never a 500: a body that is not
JSON, too large, nested too deeply for the parser (``RecursionError``), or a text with characters that cannot
be stored (NUL, lone surrogates, other controls and non-characters; lib/text/untrusted.bad_character).
"""
import json

from werkzeug.exceptions import BadRequest

from ..lib.text import untrusted

MAX_BODY_BYTES = 256 * 1024      # a question, a conversation id, the placeholder mapping: far below this


def read_json_object(env, httprequest):
    """The request body as a JSON object (a dict), or :class:`BadRequest` with a German message."""
    invalid = env._("The request is not valid JSON.")
    length = httprequest.content_length
    if length is not None and length > MAX_BODY_BYTES:
        raise BadRequest(env._("The request is too large."))
    raw = httprequest.get_data(cache=True)
    if len(raw) > MAX_BODY_BYTES:
        raise BadRequest(env._("The request is too large."))
    try:
        body = json.loads(raw.decode("utf-8") or "{}")
    except (ValueError, RecursionError, UnicodeDecodeError, MemoryError):
        raise BadRequest(invalid) from None
    if not isinstance(body, dict):
        raise BadRequest(invalid)
    return body


def check_text(env, text):
    """Refuse ``text`` (400) if it holds a character that must not be stored; returns it unchanged."""
    problem = untrusted.bad_character(text)
    if problem:
        raise BadRequest(env._("The text contains a character that is not allowed (%(what)s). Please remove it "
                               "and try again.", what=problem))
    return text


def clean_mapping(mapping):
    """The placeholder mapping the browser sent back, or None when any of its texts holds a refused character
    (it is only used to recognise values again; a bad one simply starts a new mapping)."""
    if not isinstance(mapping, dict):
        return None
    items = mapping.get("items")
    if not isinstance(items, list):
        return None
    for item in items:
        if isinstance(item, (list, tuple)):
            for part in item:
                if isinstance(part, str) and untrusted.bad_character(part):
                    return None
    return mapping


def rate_limited(env, uid, settings):
    """True when ``uid`` asked ``questions_per_minute`` questions in the last minute (logged or running)."""
    limit = settings.get("questions_per_minute") or 0
    if limit <= 0:
        return False
    return env["pv.kb.query"].sudo()._asked_recently(uid, seconds=60) >= limit
