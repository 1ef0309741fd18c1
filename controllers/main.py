"""Endpoints of the chat panel.

``/pv_kb/ask/stream`` streams NDJSON events while the answer is generated: the
agent runs in a worker thread with its own cursor (the request's cursor is gone
once the response starts) and hands events to the response through a queue.
The answer time limit (setting ``answer_time_limit``) bounds the model call;
the response gives up a little later in any case, so no request outlives it.
"""
import json
import logging
import queue
import threading
import time

from werkzeug.exceptions import BadRequest, Forbidden

from odoo import api, http
from odoo.http import request

_logger = logging.getLogger(__name__)

GROUP = "pv_kb.group_pv_kb_user"
_DONE = object()


def _check_group():
    if not request.env.user.has_group(GROUP):
        raise Forbidden(request.env._("You have no access to the knowledge base assistant."))


def answer_payload(result):
    """The final event / JSON result for an AgentAnswer."""
    info = result.retrieval.entry_info if result.retrieval else {}
    citations = [{"kb_id": i, "entry_id": info[i]["id"], "title": info[i]["title"], "stand": info[i]["stand"]}
                 for i in result.cited_ids if i in info]
    return {
        "type": "final",
        "query_id": result.query.id if result.query else None,
        "conversation_id": result.query.conversation_id.id if result.query else None,
        "status": result.status,
        "answer": result.answer,
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
    conversation = env["pv.kb.conversation"].search([("id", "=", int(conversation_id)), ("user_id", "=", env.uid)])
    if not conversation:
        raise Forbidden(env._("This conversation does not exist or is not yours."))
    return conversation


def _conversation(env, conversation_id):
    if conversation_id:
        return _own_conversation(env, conversation_id)
    # named by the agent after the personal-data gate (the masked question), never by the raw question
    return env["pv.kb.conversation"].create({"name": env._("New conversation")})


class PvKbController(http.Controller):

    @http.route("/pv_kb/ask", type="jsonrpc", auth="user")
    def ask(self, question, conversation_id=None, pii_mapping=None):
        _check_group()
        question = (question or "").strip()
        if not question:
            raise BadRequest(request.env._("Please enter a question."))
        conversation = _conversation(request.env, conversation_id)
        result = request.env["pv.kb.agent"].ask(question, conversation, pii_mapping=pii_mapping)
        return answer_payload(result)

    @http.route("/pv_kb/ask/stream", type="http", auth="user", methods=["POST"], csrf=False)
    def ask_stream(self):
        _check_group()
        try:
            body = json.loads(request.httprequest.get_data(as_text=True) or "{}")
        except ValueError:
            raise BadRequest("invalid JSON")  # noqa: B904
        # CSRF as Odoo checks it for http routes, read from the JSON body
        if not request.validate_csrf(body.get("csrf_token")):
            raise BadRequest(request.env._("Session expired: please reload the page."))
        question = (body.get("question") or "").strip()
        if not question:
            raise BadRequest(request.env._("Please enter a question."))
        if body.get("conversation_id"):
            _own_conversation(request.env, body["conversation_id"])   # 403 before anything starts
        settings = request.env["pv.kb.settings"]._get()
        limit = settings["answer_time_limit"]
        # the agent's own messages, translated here: the worker may fail before it has an environment
        failed = request.env._("The question could not be answered because of an internal error. Please try "
                               "again later; if it happens again, tell your administrator.")
        too_late = request.env._("The time limit for the answer was reached.")
        events = queue.Queue()
        worker = threading.Thread(
            target=self._stream_worker, name="pv_kb-answer", daemon=True,
            args=(request.env.registry, request.env.uid, dict(request.env.context), question,
                  body.get("conversation_id"), events, time.monotonic() + limit, failed, body.get("pii_mapping")))
        worker.start()
        return request.make_response(
            self._stream_events(events, limit + 15, too_late),
            headers=[("Content-Type", "application/x-ndjson; charset=utf-8"), ("Cache-Control", "no-store"),
                     ("X-Accel-Buffering", "no")])

    @staticmethod
    def _stream_worker(registry, uid, context, question, conversation_id, events, deadline, failed, pii_mapping=None):
        threading.current_thread().dbname = registry.db_name
        try:
            with registry.cursor() as cr:
                env = api.Environment(cr, uid, context)
                conversation = _conversation(env, conversation_id)

                def on_retrieved(retrieval):
                    events.put({"type": "meta", "query_id": None, "conversation_id": conversation.id,
                                "mode": retrieval.mode,
                                "retrieved": [{"kb_id": i, "title": retrieval.entry_info[i]["title"],
                                               "stand": retrieval.entry_info[i]["stand"]}
                                              for i in retrieval.entry_ids if i in retrieval.entry_info]})

                def on_delta(text):
                    events.put({"type": "reset"} if text is None else {"type": "delta", "text": text})

                result = env["pv.kb.agent"].ask(question, conversation, on_delta=on_delta,
                                                on_retrieved=on_retrieved, deadline=deadline, pii_mapping=pii_mapping)
                payload = answer_payload(result)
                cr.commit()
                events.put(payload)
        except Forbidden as exc:
            events.put({"type": "error", "message": exc.description})
        except Exception:
            _logger.exception("pv_kb: streamed answer failed")
            events.put({"type": "error", "message": failed})
        finally:
            events.put(_DONE)

    @staticmethod
    def _stream_events(events, limit, too_late):
        end = time.monotonic() + limit
        while True:
            try:
                event = events.get(timeout=max(0.1, end - time.monotonic()))
            except queue.Empty:
                yield json.dumps({"type": "error", "message": too_late}, ensure_ascii=False) + "\n"
                return
            if event is _DONE:
                return
            yield json.dumps(event, ensure_ascii=False) + "\n"

    @http.route("/pv_kb/feedback", type="jsonrpc", auth="user")
    def feedback(self, query_id, rating, comment=None):
        _check_group()
        query = request.env["pv.kb.query"].search([("id", "=", int(query_id)), ("user_id", "=", request.env.uid)])
        if not query:
            raise Forbidden(request.env._("This question does not exist or is not yours."))
        query._set_feedback(rating, comment)
        return {"ok": True}

    @http.route("/pv_kb/conversations", type="jsonrpc", auth="user")
    def conversations(self, limit=30):
        _check_group()
        records = request.env["pv.kb.conversation"].search([("user_id", "=", request.env.uid)], limit=int(limit))
        return [{"id": c.id, "name": c.name, "date": str(c.write_date)} for c in records]

    @http.route("/pv_kb/conversation", type="jsonrpc", auth="user")
    def conversation(self, conversation_id):
        _check_group()
        conversation = _own_conversation(request.env, conversation_id)
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
            })
        return {"id": conversation.id, "name": conversation.name, "turns": turns}
