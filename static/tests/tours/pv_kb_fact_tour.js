import { registry } from "@web/core/registry";

/**
 * A value question answered from the Kernwerte: the lines with year, value, entry and Stand appear, and the
 * citation chip opens the entry with the value's cell marked (its table row lightly).
 */
registry.category("web_tour.tours").add("pv_kb_fact_tour", {
    url: "/odoo",
    steps: () => [
        {
            content: "Wait until the start screen is loaded",
            trigger: ".o_action_manager .o_action",
        },
        {
            content: "Open the assistant from the systray",
            trigger: ".o_pv_kb_systray_toggle",
            run: "click",
        },
        {
            content: "Ask a value question",
            trigger: ".o_pv_kb_panel .o_pv_kb_input",
            run: "edit GFB 2025? && press Enter",
        },
        {
            content: "The answer from the Kernwerte: the value with its year",
            trigger:
                ".o_pv_kb_turn:not([data-status='streaming']) .o_pv_kb_body li:contains('2025'):contains('551,10')",
            timeout: 60000,
        },
        {
            content: "Open the entry from the line's citation chip",
            trigger: ".o_pv_kb_turn .o_pv_kb_body li:contains('551,10') .o_pv_kb_cite[data-kb-id='lb-gfb-01']",
            run: "click",
        },
        {
            content: "The entry opens with the value's cell marked in its lightly marked table row",
            trigger:
                ".o_form_view tr.o_pv_kb_quote_row:contains('Geringfügigkeitsgrenze') > td.o_pv_kb_quote_hl:contains('551,10')",
        },
        {
            content: "Only the cell is marked strongly, not the whole row",
            trigger: ".o_form_view .o_pv_kb_entry_body_text:not(:has(tr.o_pv_kb_quote_hl))",
        },
    ],
});
