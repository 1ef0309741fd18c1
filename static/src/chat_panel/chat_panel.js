import { Component, onMounted, onWillUnmount, useEffect, useRef, useState } from "@odoo/owl";
import { _t } from "@web/core/l10n/translation";
import { useService } from "@web/core/utils/hooks";
import { ChatComposer } from "../chat_composer/chat_composer";
import { ChatMessage } from "../chat_message/chat_message";
import { ConversationList } from "../conversation_list/conversation_list";

/**
 * The assistant panel, docked at the right above the current screen. Mounted as a
 * main component, so it stays while actions change; its state is in `pv_kb_chat`.
 */
export class ChatPanel extends Component {
    static template = "pv_kb.ChatPanel";
    static components = { ChatComposer, ChatMessage, ConversationList };
    static props = {};

    setup() {
        this.chat = useService("pv_kb_chat");
        this.state = useState(this.chat.state);
        this.messagesRef = useRef("messages");
        this.listRef = useRef("list");
        this.stickToBottom = true;
        this.resizing = false;

        // Follow the streamed answer while the user is at the bottom of the list.
        let observer = null;
        useEffect(
            (list) => {
                if (!list || !window.ResizeObserver) {
                    return;
                }
                observer = new window.ResizeObserver(() => this.scrollToBottomIfSticky());
                observer.observe(list);
                this.scrollToBottomIfSticky();
                return () => observer.disconnect();
            },
            () => [this.listRef.el]
        );
        onMounted(() => this.scrollToBottomIfSticky());
        onWillUnmount(() => observer?.disconnect());
    }

    get expandLabel() {
        return this.state.expanded ? _t("Narrow the panel") : _t("Expand the panel");
    }

    get panelStyle() {
        return this.state.expanded ? "" : `width: ${this.state.width}px;`;
    }

    scrollToBottomIfSticky() {
        const el = this.messagesRef.el;
        if (el && this.stickToBottom) {
            el.scrollTop = el.scrollHeight;
        }
    }

    onScroll() {
        const el = this.messagesRef.el;
        if (el) {
            this.stickToBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
        }
    }

    onKeydown(ev) {
        if (ev.key === "Escape" && !this.state.streaming) {
            ev.stopPropagation();
            this.chat.close();
        }
    }

    newConversation() {
        this.stickToBottom = true;
        this.chat.newConversation();
    }

    // ------------------------------------------------------------ resizing

    onResizeStart(ev) {
        if (ev.button !== 0) {
            return;
        }
        ev.preventDefault();
        this.resizing = true;
        ev.currentTarget.setPointerCapture?.(ev.pointerId);
        document.body.classList.add("o_pv_kb_resizing");
    }

    onResizeMove(ev) {
        if (this.resizing) {
            this.chat.setWidth(window.innerWidth - ev.clientX);
        }
    }

    onResizeEnd(ev) {
        if (!this.resizing) {
            return;
        }
        this.resizing = false;
        ev.currentTarget.releasePointerCapture?.(ev.pointerId);
        document.body.classList.remove("o_pv_kb_resizing");
        this.chat.persist();
    }

    onResizeKey(ev) {
        const step = ev.shiftKey ? 80 : 20;
        if (ev.key === "ArrowLeft") {
            this.chat.setWidth(this.state.width + step);
        } else if (ev.key === "ArrowRight") {
            this.chat.setWidth(this.state.width - step);
        } else {
            return;
        }
        ev.preventDefault();
        this.chat.persist();
    }
}
