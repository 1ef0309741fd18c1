import { Component, onMounted, useRef, useState } from "@odoo/owl";
import { useService } from "@web/core/utils/hooks";
import { MAX_QUESTION_LENGTH } from "../constants";

/** Question input: Enter sends, Shift+Enter breaks the line, Stop while an answer streams. */
export class ChatComposer extends Component {
    static template = "pv_kb.ChatComposer";
    static props = {};

    setup() {
        this.chat = useService("pv_kb_chat");
        this.state = useState(this.chat.state);
        this.input = useState({ text: "" });
        this.textareaRef = useRef("textarea");
        this.maxLength = MAX_QUESTION_LENGTH;
        onMounted(() => this.textareaRef.el?.focus());
    }

    get length() {
        return this.input.text.length;
    }

    get tooLong() {
        return this.length > this.maxLength;
    }

    get canSend() {
        return !this.state.streaming && !this.tooLong && Boolean(this.input.text.trim());
    }

    onInput(ev) {
        this.input.text = ev.target.value;
        this.fitHeight();
    }

    fitHeight() {
        const el = this.textareaRef.el;
        if (el) {
            el.style.height = "auto";
            el.style.height = `${Math.min(el.scrollHeight, 200)}px`;
        }
    }

    onKeydown(ev) {
        if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
            ev.preventDefault();
            this.send();
        }
    }

    async send() {
        if (!this.canSend) {
            return;
        }
        const question = this.input.text;
        this.input.text = "";
        if (this.textareaRef.el) {
            this.textareaRef.el.value = "";
            this.fitHeight();
        }
        await this.chat.ask(question);
        this.textareaRef.el?.focus();
    }
}
