import { registry } from "@web/core/registry";

/**
 * Ask the assistant a question from the demo knowledge base, open a cited entry,
 * come back and rate the answer. Needs the server routes and a stand-in model.
 */
registry.category("web_tour.tours").add("pv_kb_chat_tour", {
    url: "/odoo",
    steps: () => {
        let citedId = null;
        return [
            {
                content: "Wait until the start screen is loaded (it would take the focus later)",
                trigger: ".o_action_manager .o_action",
            },
            {
                content: "Open the assistant from the systray",
                trigger: ".o_pv_kb_systray_toggle",
                run: "click",
            },
            {
                content: "Type a question and send it with Enter",
                trigger: ".o_pv_kb_panel .o_pv_kb_input",
                run: "edit Wie hoch ist der Freibetrag für Sonderzahlungen? && press Enter",
            },
            {
                content: "The question was sent",
                trigger: ".o_pv_kb_panel .o_pv_kb_question:contains('Freibetrag für Sonderzahlungen')",
            },
            {
                content: "Wait for a finished answer that cites an entry, then open that entry",
                trigger:
                    ".o_pv_kb_turn:not([data-status='streaming']):not([data-status='fehler']) .o_pv_kb_body .o_pv_kb_cite",
                timeout: 60000,
                run() {
                    citedId = this.anchor.dataset.kbId;
                    this.anchor.click();
                },
            },
            {
                content: "The entry form shows the cited id",
                trigger: ".o_form_view .o_field_widget[name='kb_id']",
                run() {
                    const shown = this.anchor.textContent.trim();
                    if (!citedId || shown !== citedId) {
                        throw new Error(`Expected entry ${citedId} in the form, found "${shown}".`);
                    }
                },
            },
            {
                content: "The panel stayed open over the form",
                trigger: ".o_pv_kb_panel .o_pv_kb_turn .o_pv_kb_body",
            },
            {
                content: "Go back with the breadcrumb",
                trigger: ".o_breadcrumb .breadcrumb-item:not(.active) a, .o_breadcrumb .o_back_button",
                run: "click",
            },
            {
                content: "Back on the previous screen, the panel still shows the conversation",
                trigger: "body:not(:has(.o_form_view .o_field_widget[name='kb_id'])) .o_pv_kb_panel .o_pv_kb_question:contains('Freibetrag für Sonderzahlungen')",
            },
            {
                content: "Rate the answer as helpful",
                trigger: ".o_pv_kb_panel .o_pv_kb_feedback_up",
                run: "click",
            },
            {
                content: "The feedback is acknowledged",
                trigger: ".o_pv_kb_panel .o_pv_kb_feedback_up.active ~ .o_pv_kb_feedback_ack",
            },
        ];
    },
});
