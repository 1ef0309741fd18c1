"""Limits on answers generated at once: all users together and per user, across every Odoo process.

Each running answer holds a slot: a row leased until its answer time limit has passed (plus a minute), so a
process that dies frees its slots by itself. Taking a slot is one short transaction (serialised by an
advisory transaction lock); no connection is held while the answer is generated.
"""
import random
import time
from datetime import timedelta

from psycopg2 import errors as pg_errors

from odoo import api, fields, models
from odoo.tools import SQL

SLOT_LOCK_KEY = 0x70766B73    # "pvks"
LEASE_GRACE = 60              # seconds beyond the answer time limit
RELEASE_TRIES = 5


def release_slot(registry, uid, context, slot_id, *, tries=RELEASE_TRIES, pause=0.05, cursor=None):
    """Free ``slot_id`` in a transaction of its own, after the answer.

    The panel's poll writes the same row (``polled_at``) at any moment, and a DELETE that meets a row updated
    by a transaction committed after its snapshot fails with a serialization error: try again with a fresh
    snapshot, a little later each time. Raises the last error when every try failed (the lease then frees the
    slot by itself). ``cursor`` makes the transactions (default: the registry's cursors)."""
    for attempt in range(1, tries + 1):
        try:
            with (cursor or registry.cursor)() as cr:
                api.Environment(cr, uid, context)["pv.kb.answer.slot"].sudo()._release(slot_id)
            return attempt
        except (pg_errors.SerializationFailure, pg_errors.LockNotAvailable, pg_errors.DeadlockDetected):
            if attempt == tries:
                raise
            time.sleep(random.uniform(0, pause * 2 ** attempt))
    raise AssertionError("unreachable")


class PvKbAnswerSlot(models.Model):
    _name = "pv.kb.answer.slot"
    _description = "Running answer (concurrency limit)"
    _log_access = False
    _order = "started_at"

    user_id = fields.Many2one("res.users", required=True, readonly=True, ondelete="cascade", index=True)
    started_at = fields.Datetime(required=True, readonly=True)
    expires_at = fields.Datetime(required=True, readonly=True, index=True)
    # what the panel tells a polled answer (pv.kb.answer.job): it is still watched, or Stop
    polled_at = fields.Datetime("Last poll", readonly=True)
    stop_requested = fields.Boolean("Stop requested", readonly=True)

    @api.model
    def _acquire(self, uid, settings):
        """A slot id for ``uid``, or None when the global or the user's limit is reached.

        Runs in the caller's transaction; the caller commits (the stream route commits when its endpoint
        returns, before the answer starts)."""
        cr = self.env.cr
        cr.execute("SELECT pg_advisory_xact_lock(%s)", [SLOT_LOCK_KEY])
        cr.execute("DELETE FROM pv_kb_answer_slot WHERE expires_at < now() AT TIME ZONE 'UTC'")
        cr.execute("SELECT count(*), count(*) FILTER (WHERE user_id = %s) FROM pv_kb_answer_slot", [uid])
        running, mine = cr.fetchone()
        if running >= settings["max_concurrent_answers"] or mine >= settings["max_answers_per_user"]:
            return None
        now = fields.Datetime.now()
        lease = now + timedelta(seconds=settings["answer_time_limit"] + LEASE_GRACE)
        cr.execute(SQL("INSERT INTO pv_kb_answer_slot (user_id, started_at, expires_at) VALUES (%s, %s, %s) "
                       "RETURNING id", uid, now, lease))
        return cr.fetchone()[0]

    @api.model
    def _release(self, slot_id):
        if slot_id:
            # a serialization failure here is expected now and then: release_slot tries again
            self.env.cr.execute("DELETE FROM pv_kb_answer_slot WHERE id = %s", [slot_id], log_exceptions=False)

    @api.model
    def _signal(self, slot_id, *, polled=False, stop=False):
        """The panel's word to a polled answer: still watched (``polled``), or ``stop``."""
        if polled:
            self.env.cr.execute("UPDATE pv_kb_answer_slot SET polled_at = now() AT TIME ZONE 'UTC' WHERE id = %s",
                                [slot_id])
        if stop:
            self.env.cr.execute("UPDATE pv_kb_answer_slot SET stop_requested = TRUE WHERE id = %s", [slot_id])
