import { Component, useState } from "@odoo/owl";
import { useService } from "@web/core/utils/hooks";

/** The book icon in the systray; it opens and closes the assistant panel. */
export class ChatSystray extends Component {
    static template = "pv_kb.ChatSystray";
    static props = {};

    setup() {
        this.chat = useService("pv_kb_chat");
        this.state = useState(this.chat.state);
    }
}
