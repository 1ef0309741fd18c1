"""Endpoints of the chat panel: HTTP only — the answer itself is the agent's pipeline (models/pv_kb_agent.py).

The stream route (``/websocket/pv_kb/ask/stream``; also ``/pv_kb/ask/stream``) checks the request (group,
CSRF, the conversation is the user's own), takes a slot (global and per-user limits on answers at once) and
commits; Odoo then releases the request's database connection. A worker thread runs the pipeline with a short
cursor per database step (``pv_kb_agent.ShortSteps``: no connection held while a model answers). How its events
reach the panel depends on the process the request landed on (models/pv_kb_answer_job.py):

- the gevent worker or the threaded server: the response streams them as NDJSON — ``meta``, ``delta``,
  ``reset``, ``final`` (the turn as the conversation's history gives it) or ``error``, and a ``ping`` line every
  half second while it waits, so a client that went away (or pressed Stop) is noticed within a second and the
  model request is closed;
- a prefork HTTP worker (no proxy, or one without Odoo's ``/websocket`` rule): streaming would hold the worker
  for the whole answer, so the response is one ``poll`` line and ends; the events go into a job row, which the
  panel reads with ``/pv_kb/ask/poll`` and stops with ``/pv_kb/ask/stop``.

The worker frees the slot at the end. The answer time limit (setting ``answer_time_limit``) bounds the whole
answer, regeneration included; the response gives up a little later in any case (docs/operations.md).
"""
import json
import logging
import queue
import threading
import time

from werkzeug.exceptions import BadRequest, Forbidden

from odoo import http
from odoo.http import request

from ..lib.llm import transport as ollama_transport
from ..models import pv_kb_agent as agent_pipeline, pv_kb_answer_job as answer_job
from ..models.pv_kb_answer_slot import release_slot
from . import request_input

_logger = logging.getLogger(__name__)

GROUP = "pv_kb.group_pv_kb_user"
MAX_COMMENT_CHARS = 2000
PING_SECONDS = 0.5
STREAM_GRACE = 15          # seconds the response waits beyond the answer time limit
# under Odoo's own prefix for its gevent worker: the proxy configuration Odoo documents sends "/websocket"
# there (nginx: location /websocket), so streams reach it with no rule of ours; the short path is kept for
# proxies set up with a rule for it
STREAM_ROUTES = ["/websocket/pv_kb/ask/stream", "/pv_kb/ask/stream"]


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


def meta_event(retrieval, conversation_id):
    """The stream's first event: what was retrieved (the chips' titles while the answer is written)."""
    return {"type": "meta", "query_id": None, "conversation_id": conversation_id, "mode": retrieval.mode,
            "retrieved": [{"kb_id": i, "title": retrieval.entry_info[i]["title"],
                           "stand": retrieval.entry_info[i]["stand"]}
                          for i in retrieval.entry_ids if i in retrieval.entry_info]}


def final_event(result):
    """The stream's last event: the finished turn as the conversation's history gives it (pv.kb.query._turn),
    plus the personal-data mapping for this user's screen only (sent back with the next question of the
    conversation, never stored)."""
    return dict(result.turn, type="final", pii={"count": result.pii_count, "mapping": result.pii_mapping})


def _own_conversation(env, conversation_id):
    """The user's own conversation (managers may read others', but do not write into them)."""
    conversation = env["pv.kb.conversation"].search([("id", "=", conversation_id), ("user_id", "=", env.uid)])
    if not conversation:
        raise Forbidden(env._("This conversation does not exist or is not yours."))
    return conversation


def _json(status, payload):
    return request.make_response(json.dumps(payload, ensure_ascii=False), status=status,
                                 headers=[("Content-Type", "application/json; charset=utf-8")])


class PvKbController(http.Controller):

    @http.route(STREAM_ROUTES, type="http", auth="user", methods=["POST"], csrf=False)
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
        served = answer_job.how_served()
        job = env["pv.kb.answer.job"].sudo()._start(env.uid, slot) if served == "polled" else None
        # committed now, so that the worker can release it whatever happens (the request's own transaction
        # would end only when this endpoint returns)
        env.cr.commit()
        limit = settings["answer_time_limit"]
        # the agent's messages, translated here: the worker may fail before it has an environment
        texts = env["pv.kb.agent"]._texts()
        events = queue.Queue()
        cancel = ollama_transport.CancelToken()
        context = dict(env.context)
        # a polled answer's threads outlive the request: a prefork worker that is recycled meanwhile waits
        # for them (non-daemon) instead of cutting the answer off
        worker = threading.Thread(
            target=self._stream_worker, name="pv_kb-answer", daemon=not job,
            args=(env.registry, env.uid, context, question, conversation_id, events,
                  time.monotonic() + limit, texts, cancel, slot, settings,
                  request_input.clean_mapping(body.get("pii_mapping")), served))
        worker.start()
        if job:
            # not streamed here (that would hold this HTTP worker for the whole answer): the answer writes its
            # progress into the job, the panel fetches it with short requests (/pv_kb/ask/poll)
            threading.Thread(target=answer_job.pump, name="pv_kb-answer-progress", daemon=False,
                             args=(env.registry, env.uid, context, job, events, cancel, limit + STREAM_GRACE,
                                   texts["too_late"])).start()
            return request.make_response(
                json.dumps({"type": "poll", "job_id": job, "interval_ms": answer_job.POLL_MS}) + "\n",
                headers=[("Content-Type", "application/x-ndjson; charset=utf-8"), ("Cache-Control", "no-store")])
        return request.make_response(
            self._stream_events(events, limit + STREAM_GRACE, texts["too_late"], cancel),
            headers=[("Content-Type", "application/x-ndjson; charset=utf-8"), ("Cache-Control", "no-store"),
                     ("X-Accel-Buffering", "no")])

    @staticmethod
    def _stream_worker(registry, uid, context, question, conversation_id, events, deadline, texts, cancel, slot,
                       settings, pii_mapping=None, served=None):
        """The answer, outside the request: the agent's pipeline with a short cursor per database step."""
        threading.current_thread().dbname = registry.db_name
        try:
            result = agent_pipeline.run(
                agent_pipeline.ShortSteps(registry, uid, context), question,
                conversation_id or agent_pipeline.NEW_CONVERSATION, settings=settings, pii_mapping=pii_mapping,
                deadline=deadline, cancel=cancel, served=served,
                on_retrieved=lambda retrieval, conv_id: events.put(meta_event(retrieval, conv_id)),
                on_delta=lambda text: events.put({"type": "reset"} if text is None else {"type": "delta", "text": text}))
            events.put(final_event(result))
        except Exception:
            _logger.exception("pv_kb: streamed answer failed")
            events.put({"type": "error", "message": texts["failed"]})
        finally:
            try:
                release_slot(registry, uid, context, slot)
            except Exception:  # noqa: BLE001 - the lease expires by itself
                _logger.warning("pv_kb: answer slot %s not released, it expires by itself", slot, exc_info=True)
            events.put(answer_job.DONE)

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
                if event is answer_job.DONE:
                    return
                yield json.dumps(event, ensure_ascii=False) + "\n"
        finally:
            cancel.cancel()

    @http.route("/websocket/pv_kb/served", type="http", auth="none", methods=["GET"], save_session=False)
    def served(self):
        """How a stream request to this URL would be served (the connection test asks it through the public
        address: does the proxy send /websocket to the gevent worker?)."""
        return _json(200, {"served": answer_job.how_served()})

    @http.route("/pv_kb/ask/poll", type="jsonrpc", auth="user")
    def ask_poll(self, job_id):
        """A polled answer so far: {"events": [meta, snapshot (the text so far), final or error], "done"}."""
        _check_group()
        state = request.env["pv.kb.answer.job"].sudo()._poll(_as_id(job_id), request.env.uid)
        if state is None:
            raise Forbidden(request.env._("This answer does not exist or is not yours."))
        return state

    @http.route("/pv_kb/ask/stop", type="jsonrpc", auth="user")
    def ask_stop(self, job_id):
        """Stop a polled answer (a streamed one stops when the panel closes the stream)."""
        _check_group()
        if not request.env["pv.kb.answer.job"].sudo()._stop(_as_id(job_id), request.env.uid):
            raise Forbidden(request.env._("This answer does not exist or is not yours."))
        return {"ok": True}

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
        turns = [query._turn() for query in conversation.query_ids.sorted("id")]
        return {"id": conversation.id, "name": conversation.name, "turns": turns}
