
from odoo import api, fields, models
from odoo.exceptions import AccessError

from .pv_kb_settings import answer_mode_selection

STATUSES = [
    ("beantwortet", "Answered"),
    ("verweigert", "Refused"),
    ("unsicher", "Unverified"),
    ("fehler", "Error"),
    ("notbetrieb", "Emergency mode"),
    ("abgebrochen", "Stopped"),
]


class PvKbConversation(models.Model):
    _name = "pv.kb.conversation"
    _description = "Knowledge base conversation"
    _order = "write_date desc, id desc"

    name = fields.Char(required=True)
    user_id = fields.Many2one("res.users", required=True, default=lambda self: self.env.user, index=True,
                              ondelete="cascade")
    query_ids = fields.One2many("pv.kb.query", "conversation_id", "Questions")
    query_count = fields.Integer(compute="_compute_query_count")

    def write(self, vals):
        if "user_id" in vals and any(c.user_id.id != vals["user_id"] for c in self):
            raise AccessError(self.env._("The owner of a conversation cannot be changed."))
        return super().write(vals)

    @api.model
    def _start(self, name):
        """A new conversation of the current user (the service writes it; users only read their own)."""
        return self.sudo().create({"name": name, "user_id": self.env.uid}).with_env(self.env)

    def _discard_if_empty(self):
        """Delete these conversations if no question was logged in them (a first question that failed)."""
        empty = self.sudo().exists().filtered(lambda c: not c.query_ids)
        empty.unlink()

    def _rename(self, name):
        self.ensure_one()
        self.sudo().write({"name": name})

    @api.depends("query_ids")
    def _compute_query_count(self):
        for conversation in self:
            conversation.query_count = len(conversation.query_ids)

    def _history(self, max_turns=6):
        """Last turns as chat messages (oldest first), for the follow-up handling."""
        self.ensure_one()
        turns = self.query_ids.sorted("id")[-max_turns:]
        messages = []
        for q in turns:
            messages.append({"role": "user", "content": q.question})
            messages.append({"role": "assistant", "content": q.answer or ""})
        return messages


class PvKbQuery(models.Model):
    """One question and its answer, with what was retrieved, cited and how long each stage took."""

    _name = "pv.kb.query"
    _description = "Knowledge base question"
    _order = "id desc"
    _rec_name = "question"

    question = fields.Text(required=True, readonly=True)
    standalone_query = fields.Text("Search query", readonly=True,
                                   help="The question as searched, enriched from the conversation for follow-ups.")
    rewritten_query = fields.Text(
        "Rewritten search query", readonly=True,
        help="What the chat model made of the question for the search (setting 'Rewrite questions for the search'); "
             "only searched, never answered instead of the question.")
    conversation_id = fields.Many2one("pv.kb.conversation", index=True, ondelete="cascade", readonly=True)
    user_id = fields.Many2one("res.users", required=True, default=lambda self: self.env.user, index=True,
                              readonly=True, ondelete="cascade")
    answer = fields.Text(readonly=True)
    status = fields.Selection(STATUSES, required=True, readonly=True, index=True)
    notice = fields.Char(readonly=True)
    mode = fields.Char("Retrieval mode", readonly=True)
    cited_ids = fields.Char("Cited entries", readonly=True)
    retrieved_json = fields.Text("Retrieved (JSON)", readonly=True)
    retrieved_ids = fields.Char("Retrieved entries", readonly=True)
    violations = fields.Text(readonly=True)
    settings_json = fields.Text("Models and settings (JSON)", readonly=True)
    embedding_model = fields.Char(readonly=True)
    chat_model = fields.Char(readonly=True)
    server = fields.Char("Model server", readonly=True,
                         help="The chat server that answered (with several chat servers, see Settings); empty when "
                              "none did (emergency mode).")
    time_embed_ms = fields.Float("Embed (ms)", readonly=True, digits=(16, 1))
    time_retrieve_ms = fields.Float("Retrieve (ms)", readonly=True, digits=(16, 1))
    time_prompt_ms = fields.Float("Prompt (ms)", readonly=True, digits=(16, 1),
                                  help="Context blocks, conflict detection and messages.")
    time_generate_ms = fields.Float("Generate (ms)", readonly=True, digits=(16, 1))
    time_validate_ms = fields.Float("Validate (ms)", readonly=True, digits=(16, 1))
    time_rewrite_ms = fields.Float("Query rewriting (ms)", readonly=True, digits=(16, 1))
    time_rerank_ms = fields.Float("Reranking (ms)", readonly=True, digits=(16, 1))
    model_steps = fields.Char(
        "Optional model steps", readonly=True,
        help="Outcome of query rewriting and reranking when they are switched on; 'fallback' means the original "
             "query or the fused order was used, with the reason.")
    time_total_ms = fields.Float("Total (ms)", readonly=True, digits=(16, 1))
    prompt_tokens = fields.Integer(readonly=True)
    answer_tokens = fields.Integer(readonly=True)
    regenerations = fields.Integer(readonly=True)
    pii_count = fields.Integer("Personal data replaced", readonly=True,
                               help="How many personal details of the question were replaced by placeholders "
                                    "before processing (the values themselves are never stored).")
    from_facts = fields.Boolean("Answered from the facts", readonly=True, index=True,
                                help="The value question was answered from the Kernwerte (fact table), without the model.")
    answer_mode = fields.Selection(answer_mode_selection, readonly=True)   # the registered modes
    rejected_answer = fields.Text(
        "Rejected model text", readonly=True,
        help="What the model wrote but the checks did not let through (not shown to the user); for the curator.")
    feedback = fields.Selection([("up", "👍"), ("down", "👎")], readonly=True)
    feedback_comment = fields.Text(readonly=True)


    def write(self, vals):
        if "user_id" in vals and any(q.user_id.id != vals["user_id"] for q in self):
            raise AccessError(self.env._("The author of a logged question cannot be changed."))
        return super().write(vals)

    @api.model
    def _asked_recently(self, uid, seconds=60):
        """Questions ``uid`` asked in the last ``seconds``: logged ones and answers still running (slots)."""
        self.env.cr.execute(
            "SELECT (SELECT count(*) FROM pv_kb_query WHERE user_id = %s "
            "          AND create_date > (now() AT TIME ZONE 'UTC') - make_interval(secs => %s))"
            "     + (SELECT count(*) FROM pv_kb_answer_slot WHERE user_id = %s)", [uid, seconds, uid])
        return self.env.cr.fetchone()[0]

    def _set_feedback(self, rating, comment=None):
        self.ensure_one()
        if rating not in ("up", "down"):
            raise ValueError(rating)
        # users may rate their own questions only (record rules restrict read; write goes through sudo here)
        self.check_access("read")
        vals = {"feedback": rating}
        if comment:   # a new rating without a comment keeps the comment given before
            # free text of the user: stored only as the personal-data gate passed it (PiiGateError: not stored)
            vals["feedback_comment"] = self.env["pv.kb.settings"]._pii_gate(comment).question
        self.sudo().write(vals)
