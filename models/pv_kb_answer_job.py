"""How a streamed answer is served, and the polled answer: an answer that runs outside the request.

A streamed answer lasts as long as the model writes. Where the request is served decides what that costs
(:func:`how_served`):

- ``evented``: Odoo's gevent worker (multi-process mode, the request came through the proxy's ``/websocket``
  rule — the stream routes live under ``/websocket/``): a waiting answer is a greenlet;
- ``threaded``: the threaded server (``--workers 0``): a thread per request, as for every request;
- ``polled``: anything else — a prefork HTTP worker (the request went straight to the HTTP port, or the proxy
  does not route ``/websocket``), or a WSGI server we do not know. Streaming there would hold an HTTP worker
  for the whole answer, so the request only starts the answer and returns; the answer runs in a thread of the
  process and writes its progress into a job row (a short transaction about every half second), and the
  panel fetches it with short requests.

The job row (:class:`PvKbAnswerJob`) is written only by the answer's own thread; what the panel tells it —
it is still there, or Stop — goes into the answer's slot row (``pv.kb.answer.slot``), which the thread reads
with each progress write. So the two sides never update the same row. A Stop, or a panel that has not asked
for :data:`CLIENT_GONE` seconds, cancels the model request at the next progress write (within a second).
"""
import json
import logging
import queue
import time

from odoo import api, fields, models

_logger = logging.getLogger(__name__)

FLUSH_SECONDS = 0.4        # the answer's thread writes its progress at most this often (and checks for Stop)
CLIENT_GONE = 10           # seconds without a poll: the panel is gone, the answer is stopped
POLL_MS = 500              # what the panel is told: ask again after this many milliseconds
KEEP_HOURS = 1             # finished jobs are deleted after this long (when the next job starts)
DONE = object()            # end of the answer's events


def how_served():
    """``evented``, ``threaded`` or ``polled`` for the process handling the current request (see above)."""
    import odoo
    from odoo.service import server

    if getattr(odoo, "evented", False):
        return "evented"
    if isinstance(server.server, server.ThreadedServer):
        return "threaded"
    return "polled"


def serving_problem(env, days=7):
    """The warning for the settings page when answers of the last ``days`` days were served by HTTP workers
    (counted in the question log), or "" when none were."""
    env.cr.execute("SELECT count(*) FILTER (WHERE served_by = 'polled'), count(*) FILTER (WHERE served_by IS NOT "
                   "NULL) FROM pv_kb_query WHERE create_date > (now() AT TIME ZONE 'UTC') - make_interval(days => %s)",
                   [days])
    polled, total = env.cr.fetchone()
    if not polled:
        return ""
    return env._("%(polled)s of %(total)s answers of the last %(days)s days reached an HTTP worker instead of "
                 "Odoo's gevent worker (fetched by polling: slower, and more requests). %(fix)s",
                 polled=polled, total=total, days=days, fix=fix_text(env))


def fix_text(env):
    return env._("Fix: in the reverse proxy, send /websocket to Odoo's gevent port (gevent_port, default 8072), "
                 "as in Odoo's documented nginx configuration: location /websocket { proxy_pass "
                 "http://127.0.0.1:8072; }")


def fold(state, event):
    """One answer event into the polled answer's state: the meta event, the text so far, the end."""
    kind = event.get("type")
    if kind == "meta":
        state["meta"] = event
    elif kind == "delta":
        state["text"] += event.get("text") or ""
    elif kind == "reset":
        state["text"] = ""
    elif kind in ("final", "error"):
        state["end"] = event
    return state


class PvKbAnswerJob(models.Model):
    _name = "pv.kb.answer.job"
    _description = "Answer fetched by polling"
    _log_access = False
    _order = "id desc"

    user_id = fields.Many2one("res.users", required=True, readonly=True, ondelete="cascade", index=True)
    slot_id = fields.Integer("Answer slot", readonly=True,
                             help="The answer's slot (pv.kb.answer.slot): the panel's signals.")
    started_at = fields.Datetime("Started", required=True, readonly=True, index=True)
    meta_json = fields.Text("Sources event (JSON)", readonly=True)
    text = fields.Text("Text so far", readonly=True)
    end_json = fields.Text("Last event (JSON)", readonly=True, help="The final or error event, once the answer is done.")

    @api.model
    def _start(self, uid, slot_id):
        """A job for a new answer (in the request's transaction); old ones are deleted."""
        cr = self.env.cr
        cr.execute("DELETE FROM pv_kb_answer_job WHERE started_at < (now() AT TIME ZONE 'UTC') - make_interval("
                   "hours => %s)", [KEEP_HOURS])
        cr.execute("INSERT INTO pv_kb_answer_job (user_id, slot_id, started_at, text) "
                   "VALUES (%s, %s, now() AT TIME ZONE 'UTC', '') RETURNING id", [uid, slot_id])
        return cr.fetchone()[0]

    @api.model
    def _write_progress(self, job_id, state):
        """The answer's thread: store the state; True when the panel asked to stop or is gone."""
        cr = self.env.cr
        cr.execute("UPDATE pv_kb_answer_job SET meta_json = %s, text = %s, end_json = %s WHERE id = %s "
                   "RETURNING slot_id",
                   [json.dumps(state["meta"], ensure_ascii=False) if state["meta"] else None, state["text"],
                    json.dumps(state["end"], ensure_ascii=False) if state["end"] else None, job_id])
        row = cr.fetchone()
        if not row:
            return True
        cr.execute("SELECT stop_requested, (now() AT TIME ZONE 'UTC') - COALESCE(polled_at, started_at) "
                   "> make_interval(secs => %s) FROM pv_kb_answer_slot WHERE id = %s", [CLIENT_GONE, row[0]])
        signal = cr.fetchone()
        return bool(signal and (signal[0] or signal[1]))

    @api.model
    def _poll(self, job_id, uid):
        """The panel's view of the user's job: {"events": [...], "done": bool}, or None when it is not theirs.
        Marks the answer as still watched."""
        cr = self.env.cr
        cr.execute("SELECT slot_id, meta_json, text, end_json FROM pv_kb_answer_job WHERE id = %s AND user_id = %s",
                   [job_id, uid])
        row = cr.fetchone()
        if not row:
            return None
        slot_id, meta, text, end = row
        if not end:
            self.env["pv.kb.answer.slot"]._signal(slot_id, polled=True)
        events = [json.loads(meta)] if meta else []
        events.append({"type": "snapshot", "text": text or ""})
        if end:
            events.append(json.loads(end))
        return {"events": events, "done": bool(end)}

    @api.model
    def _stop(self, job_id, uid):
        cr = self.env.cr
        cr.execute("SELECT slot_id FROM pv_kb_answer_job WHERE id = %s AND user_id = %s", [job_id, uid])
        row = cr.fetchone()
        if row:
            self.env["pv.kb.answer.slot"]._signal(row[0], stop=True)
        return bool(row)


def pump(registry, uid, context, job_id, events, cancel, limit, too_late):
    """The polled answer's writer (a thread of its own): the answer's events into the job row, every
    :data:`FLUSH_SECONDS` while something changed (and at least once a second, to see a Stop), the end at
    once. A Stop or a panel that went away cancels the model request; ``limit`` bounds it all."""
    from odoo import api as odoo_api

    end = time.monotonic() + limit
    state = {"meta": None, "text": "", "end": None}
    flushed, dirty, done, end_written = 0.0, False, False, False
    while not done or (dirty and not end_written and time.monotonic() < end + 5):
        try:
            event = events.get(timeout=0.1)
        except queue.Empty:
            event = None
        if event is DONE:
            done = True
        elif event is not None and not state["end"]:
            fold(state, event)
            dirty = True
        now = time.monotonic()
        if now >= end and not state["end"]:
            state["end"] = {"type": "error", "message": too_late}
            cancel.cancel()
            done = dirty = True
        if end_written:
            continue        # waiting for the worker's DONE (it frees the slot)
        if dirty and (state["end"] or now - flushed >= FLUSH_SECONDS) or now - flushed >= 1.0:
            try:
                with registry.cursor() as cr:
                    stop = odoo_api.Environment(cr, uid, context)["pv.kb.answer.job"].sudo()._write_progress(
                        job_id, state)
                end_written, dirty = bool(state["end"]), False
            except Exception:  # noqa: BLE001 - the next write tries again; the lease bounds the answer anyway
                _logger.warning("pv_kb: progress of polled answer %s not written", job_id, exc_info=True)
                stop = False
            flushed = now
            if stop and not cancel.cancelled:
                cancel.cancel()
