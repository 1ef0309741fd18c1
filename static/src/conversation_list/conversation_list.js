import { Component, useState } from "@odoo/owl";
import {
    deserializeDate,
    deserializeDateTime,
    formatDate,
    formatDateTime,
} from "@web/core/l10n/dates";
import { useService } from "@web/core/utils/hooks";

/** Earlier conversations of the user, newest first; a click reopens one. */
export class ConversationList extends Component {
    static template = "pv_kb.ConversationList";
    static props = {};

    setup() {
        this.chat = useService("pv_kb_chat");
        this.state = useState(this.chat.state);
    }

    /**
     * @param {string} value server date ("YYYY-MM-DD") or datetime ("YYYY-MM-DD HH:MM:SS")
     * @returns {string}
     */
    formatWhen(value) {
        if (!value) {
            return "";
        }
        try {
            return value.length > 10
                ? formatDateTime(deserializeDateTime(value))
                : formatDate(deserializeDate(value));
        } catch {
            return value;
        }
    }
}
