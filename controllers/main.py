"""Endpoints of the chat panel.

``/pv_kb/ask/stream`` streams NDJSON events while the answer is generated. The endpoint itself only checks
the request and takes a slot (global and per-user limits on answers at once); when it returns, Odoo
commits and releases the request's database connection. The answer then runs in a worker thread in three
steps, each with a connection of its own only while it needs one:

1. retrieve and build the prompt (a short transaction; with query rewriting on, two: the gate, then — after
   the rewriting model call, with no connection held — retrieval),
2. rerank the retrieved entries when that is on, then call the model — **no database connection held** —
   cancellable: the stream sends a ``ping`` line every half second while it waits, so a client that went
   away (or pressed Stop) is noticed within a second and the model request is closed,
3. write the question log (a short transaction) and free the slot.

The answer time limit (setting ``answer_time_limit``) bounds the whole answer, regeneration included; the
response gives up a little later in any case. In Odoo's multi-process mode the stream belongs on the
gevent port, like ``/websocket`` (README, "Betrieb"): there a waiting answer costs a greenlet, not an
HTTP worker.
"""
import json
import logging
import queue
import threading
import time

from werkzeug.exceptions import BadRequest, Forbidden

from odoo import api, http
from odoo.http import request

from ..lib.llm import transport as ollama_transport
from ..lib.answer import links, stages
from ..lib.answer.respond import respond
from ..models.pv_kb_agent import interactive_client
from . import request_input

_logger = logging.getLogger(__name__)

GROUP = "pv_kb.group_pv_kb_user"
MAX_COMMENT_CHARS = 2000
PING_SECONDS = 0.5
STREAM_GRACE = 15          # seconds the response waits beyond the answer time limit
_DONE = object()


def _check_group():
    if not request.env.user.has_group(GROUP):
        raise Forbidden(request.env._("You have no access to the knowledge base assistant."))


def _as_id(value):
    """A record id from request input, or 400 (never a 500 for junk)."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise BadRequest(request.env._("Invalid id.")) from None
    if number <= 0 or number > 2**31 - 1:
        raise BadRequest(request.env._("Invalid id."))
    return number


def answer_payload(result):
    """The final event for an AgentAnswer."""
    info = result.retrieval.entry_info if result.retrieval else {}
    citations = [{"kb_id": i, "entry_id": info[i]["id"], "title": info[i]["title"], "stand": info[i]["stand"]}
                 for i in result.cited_ids if i in info]
    return {
        "type": "final",
        "query_id": result.query.id if result.query else None,
        "conversation_id": result.query.conversation_id.id if result.query else None,
        "status": result.status,
        "answer": result.answer,
        # the only addresses the panel makes clickable: those of the cited blocks, left in the answer
        "links": links.addresses(result.answer),
        "citations": citations,
        "violations": result.violations,
        "notice": result.notice,
        "answer_mode": result.answer_mode,
        # the passage each cited entry's statement rests on (structured mode): the chip opens it highlighted
        "quotes": [q for q in result.quotes if q["kb_id"] in info],
        "timings": {k: round(v, 1) for k, v in result.timings.items()},
        # personal data replaced in the question: the count for the notice, the mapping for this user's
        # screen only (sent back with the next question of the conversation, never stored)
        "pii": {"count": result.pii_count, "mapping": result.pii_mapping},
    }


def _own_conversation(env, conversation_id):
    """The user's own conversation (managers may read others', but do not write into them)."""
    conversation = env["pv.kb.conversation"].search([("id", "=", conversation_id), ("user_id", "=", env.uid)])
    if not conversation:
        raise Forbidden(env._("This conversation does not exist or is not yours."))
    return conversation


def _conversation(env, conversation_id):
    if conversation_id:
        return _own_conversation(env, conversation_id)
    # named by the agent after the personal-data gate (the masked question), never by the raw question
    return env["pv.kb.conversation"]._start(env._("New conversation"))


def _json(status, payload):
    return request.make_response(json.dumps(payload, ensure_ascii=False), status=status,
                                 headers=[("Content-Type", "application/json; charset=utf-8")])


class PvKbController(http.Controller):

    @http.route("/pv_kb/ask/stream", type="http", auth="user", methods=["POST"], csrf=False)
    def ask_stream(self):
        _check_group()
        body = request_input.read_json_object(request.env, request.httprequest)
        # CSRF as Odoo checks it for http routes, read from the JSON body
        if not request.validate_csrf(body.get("csrf_token")):
            raise BadRequest(request.env._("Session expired: please reload the page."))
        question = body.get("question")
        if isinstance(question, str):
            request_input.check_text(request.env, question)   # before strip(): it would eat U+0085
        question = question.strip() if isinstance(question, str) else ""
        if not question:
            raise BadRequest(request.env._("Please enter a question."))
        conversation_id = _as_id(body["conversation_id"]) if body.get("conversation_id") else None
        if conversation_id:
            _own_conversation(request.env, conversation_id)   # 403 before anything starts
        env = request.env
        settings = env["pv.kb.settings"]._get()
        if request_input.rate_limited(env, env.uid, settings):
            return _json(429, {"error": "rate", "message": env._(
                "You have asked very many questions in the last minute. Please wait a moment before asking "
                "again.")})
        slot = env["pv.kb.answer.slot"].sudo()._acquire(env.uid, settings)
        if not slot:
            return _json(429, {"error": "busy", "message": env._(
                "The assistant is busy answering other questions right now. Please try again in a moment.")})
        # committed now, so that the worker can release it whatever happens (the request's own transaction
        # would end only when this endpoint returns)
        env.cr.commit()
        limit = settings["answer_time_limit"]
        # the agent's own messages, translated here: the worker may fail before it has an environment
        texts = {
            "failed": env._("The question could not be answered because of an internal error. Please try "
                            "again later; if it happens again, tell your administrator."),
            "too_late": env._("The time limit for the answer was reached."),
        }
        events = queue.Queue()
        cancel = ollama_transport.CancelToken()
        worker = threading.Thread(
            target=self._stream_worker, name="pv_kb-answer", daemon=True,
            args=(env.registry, env.uid, dict(env.context), question, conversation_id, events,
                  time.monotonic() + limit, texts, cancel, slot, settings,
                  request_input.clean_mapping(body.get("pii_mapping"))))
        worker.start()
        return request.make_response(
            self._stream_events(events, limit + STREAM_GRACE, texts["too_late"], cancel),
            headers=[("Content-Type", "application/x-ndjson; charset=utf-8"), ("Cache-Control", "no-store"),
                     ("X-Accel-Buffering", "no")])

    @staticmethod
    def _stream_worker(registry, uid, context, question, conversation_id, events, deadline, texts, cancel, slot,
                       settings, pii_mapping=None):
        threading.current_thread().dbname = registry.db_name
        started_new = not conversation_id
        try:
            rewriting = bool(settings.get("query_rewrite"))
            # 1. gate, retrieve and build the prompt: one short transaction (two with query rewriting, whose
            #    model call runs between them with no cursor open)
            with registry.cursor() as cr:
                env = api.Environment(cr, uid, context)
                conversation = _conversation(env, conversation_id)
                prepared = env["pv.kb.agent"]._gate_question(question, conversation, settings=settings,
                                                             pii_mapping=pii_mapping)
                if not rewriting:
                    prepared = env["pv.kb.agent"]._build(prepared)
                conversation_id = conversation.id
            if rewriting:
                stages.rewrite_query(prepared, interactive_client, deadline=deadline, cancel=cancel)
                with registry.cursor() as cr:
                    prepared = api.Environment(cr, uid, context)["pv.kb.agent"]._build(prepared)
            # reranking (when on): the model orders the retrieved entries, no cursor open
            stages.rerank_prepared(prepared, interactive_client, deadline=deadline, cancel=cancel)
            retrieval = prepared.retrieval
            if retrieval:
                events.put({"type": "meta", "query_id": None, "conversation_id": conversation_id,
                            "mode": retrieval.mode,
                            "retrieved": [{"kb_id": i, "title": retrieval.entry_info[i]["title"],
                                           "stand": retrieval.entry_info[i]["stand"]}
                                          for i in retrieval.entry_ids if i in retrieval.entry_info]})

            def on_delta(text):
                events.put({"type": "reset"} if text is None else {"type": "delta", "text": text})

            # 2. the model: no database connection held
            result = respond(prepared, interactive_client, on_delta=on_delta, deadline=deadline, cancel=cancel)
            if cancel.cancelled:
                result.status, result.notice = "abgebrochen", None
            # 3. the question log: one short transaction (nothing is stored when the personal-data gate failed)
            with registry.cursor() as cr:
                env = api.Environment(cr, uid, context)
                conversation = env["pv.kb.conversation"].browse(conversation_id)
                if not prepared.pii_failed:
                    result.query = env["pv.kb.agent"]._log(prepared, result, conversation)
                payload = answer_payload(result)
            events.put(payload)
        except Forbidden as exc:
            events.put({"type": "error", "message": exc.description})
        except Exception:
            _logger.exception("pv_kb: streamed answer failed")
            events.put({"type": "error", "message": texts["failed"]})
        finally:
            try:
                with registry.cursor() as cr:
                    env = api.Environment(cr, uid, context)
                    if started_new and conversation_id:   # a first question that left no trace: no empty conversation
                        env["pv.kb.conversation"].browse(conversation_id)._discard_if_empty()
                    env["pv.kb.answer.slot"].sudo()._release(slot)
            except Exception:  # noqa: BLE001 - the lease expires by itself
                _logger.warning("pv_kb: answer slot %s not released, it expires by itself", slot, exc_info=True)
            events.put(_DONE)

    @staticmethod
    def _stream_events(events, limit, too_late, cancel):
        """The response body. A ``ping`` line every half second while waiting: a client that is gone makes
        the write fail, the server closes this generator, and ``finally`` cancels the model request."""
        end = time.monotonic() + limit
        try:
            while True:
                left = end - time.monotonic()
                if left <= 0:
                    yield json.dumps({"type": "error", "message": too_late}, ensure_ascii=False) + "\n"
                    return
                try:
                    event = events.get(timeout=min(PING_SECONDS, left))
                except queue.Empty:
                    yield '{"type": "ping"}\n'
                    continue
                if event is _DONE:
                    return
                yield json.dumps(event, ensure_ascii=False) + "\n"
        finally:
            cancel.cancel()

    @http.route("/pv_kb/feedback", type="jsonrpc", auth="user")
    def feedback(self, query_id, rating, comment=None):
        _check_group()
        if rating not in ("up", "down"):
            raise BadRequest(request.env._("Invalid rating."))
        if comment is not None and (not isinstance(comment, str) or len(comment) > MAX_COMMENT_CHARS):
            raise BadRequest(request.env._("The comment may have at most %(n)s characters.", n=MAX_COMMENT_CHARS))
        if comment:
            request_input.check_text(request.env, comment)
        query = request.env["pv.kb.query"].search([("id", "=", _as_id(query_id)), ("user_id", "=", request.env.uid)])
        if not query:
            raise Forbidden(request.env._("This question does not exist or is not yours."))
        query._set_feedback(rating, comment)
        return {"ok": True}

    @http.route("/pv_kb/conversations", type="jsonrpc", auth="user")
    def conversations(self, limit=30):
        _check_group()
        limit = min(_as_id(limit), 200)
        records = request.env["pv.kb.conversation"].search([("user_id", "=", request.env.uid)], limit=limit)
        return [{"id": c.id, "name": c.name, "date": str(c.write_date)} for c in records]

    @http.route("/pv_kb/conversation", type="jsonrpc", auth="user")
    def conversation(self, conversation_id):
        _check_group()
        conversation = _own_conversation(request.env, _as_id(conversation_id))
        Entry = request.env["pv.kb.entry"]
        turns = []
        for q in conversation.query_ids.sorted("id"):
            ids = [i.strip() for i in (q.cited_ids or "").split(",") if i.strip()]
            entries = {e.kb_id: e for e in Entry.search([("kb_id", "in", ids)])}
            turns.append({
                "query_id": q.id, "question": q.question, "answer": q.answer, "status": q.status,
                "citations": [{"kb_id": i, "entry_id": entries[i].id, "title": entries[i].name,
                               "stand": entries[i].stand} for i in ids if i in entries],
                "violations": [v for v in (q.violations or "").split("\n") if v],
                "notice": q.notice or None, "feedback": q.feedback or None,
                "links": links.addresses(q.answer or ""),
            })
        return {"id": conversation.id, "name": conversation.name, "turns": turns}
