import { Component, markup, useState } from "@odoo/owl";
import { CopyButton } from "@web/core/copy_button/copy_button";
import { _t } from "@web/core/l10n/translation";
import { useService } from "@web/core/utils/hooks";
import { renderMarkdown, sanitizeAnswerHtml } from "../markdown";

/** One question and its answer: banners, Markdown with citation chips, copy and feedback. */
export class ChatMessage extends Component {
    static template = "pv_kb.ChatMessage";
    static components = { CopyButton };
    static props = { turn: Object };

    setup() {
        this.chat = useService("pv_kb_chat");
        // Turns keep their object for their lifetime (the list is keyed by `turn.key`).
        this.turnState = useState(this.props.turn);
        this.feedback = useState({ commentOpen: false, comment: "", sending: false });
        this.copiedText = _t("Copied");
    }

    get turn() {
        return this.turnState;
    }

    get isStreaming() {
        return this.turn.status === "streaming";
    }

    get isFinal() {
        return !this.isStreaming && this.turn.status !== "stopped";
    }

    get answerHtml() {
        // While streaming, the retrieved entries are the best guess for chip tooltips.
        const citations = this.turn.citations?.length ? this.turn.citations : this.turn.retrieved;
        // links: only the addresses the server checked against the cited blocks (none while streaming)
        const links = this.isStreaming ? [] : this.turn.links || [];
        return markup(sanitizeAnswerHtml(renderMarkdown(this.turn.answer, { citations, links })));
    }

    /** "2 persönliche Angaben wurden vor der Verarbeitung durch Platzhalter ersetzt" */
    get piiNotice() {
        const count = this.turn.piiCount || 0;
        if (!count) {
            return "";
        }
        return count === 1
            ? _t("1 personal detail was replaced by a placeholder before processing")
            : _t("%s personal details were replaced by placeholders before processing", count);
    }

    get canRate() {
        return this.isFinal && Boolean(this.turn.queryId);
    }

    onBodyClick(ev) {
        const chip = ev.target.closest(".o_pv_kb_cite");
        if (!chip) {
            return;
        }
        ev.preventDefault();
        const entryId = parseInt(chip.dataset.entryId) || null;
        const kbId = chip.dataset.kbId;
        // structured answers: the passage the statement rests on, highlighted in the entry; an answer from the
        // facts: the table row of the value on the chip's line, and in it the value's cell
        const mine = (this.turn.quotes || []).filter((q) => q.kb_id === kbId);
        const line = chip.closest("li, p")?.textContent || "";
        const found = mine.find((q) => q.value && line.includes(q.value)) || mine[0];
        const cell = found && found.value && found.column >= 0 ? { column: found.column, value: found.value } : null;
        this.chat.openEntry({ entryId, kbId, quote: found?.passage || null, cell });
    }

    async rate(rating) {
        if (this.feedback.sending) {
            return;
        }
        this.feedback.sending = true;
        try {
            const ok = await this.chat.sendFeedback(this.turn, rating);
            if (ok) {
                this.feedback.commentOpen = rating === "down";
            }
        } finally {
            this.feedback.sending = false;
        }
    }

    openComment() {
        this.feedback.commentOpen = true;
    }

    async sendComment() {
        const comment = this.feedback.comment.trim();
        if (!comment || !this.turn.feedback || this.feedback.sending) {
            return;
        }
        this.feedback.sending = true;
        try {
            if (await this.chat.sendFeedback(this.turn, this.turn.feedback, comment)) {
                this.feedback.commentOpen = false;
                this.feedback.comment = "";
            }
        } finally {
            this.feedback.sending = false;
        }
    }
}
