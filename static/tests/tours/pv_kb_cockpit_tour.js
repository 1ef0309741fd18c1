import { registry } from "@web/core/registry";

/**
 * The curator's cockpit: the Übersicht with its tiles, the health check run from there, the open findings
 * of one kind, one finding's form, and the gap groups. Needs the demo KB with a first health run.
 */
registry.category("web_tour.tours").add("pv_kb_cockpit_tour", {
    url: "/odoo/pv-kb-overview",
    steps: () => [
        {
            content: "The overview shows the open findings",
            trigger: ".o_pv_kb_dashboard .o_pv_kb_tile_open .display-6",
        },
        {
            content: "Run the health check from the overview",
            trigger: ".o_pv_kb_dashboard .o_pv_kb_run_health:not([disabled])",
            run: "click",
        },
        {
            content: "The check reports its result",
            trigger: ".o_notification:contains('Einträge geprüft'), .o_notification:contains('entries checked')",
        },
        {
            content: "Open the conflicts from the table of findings by kind",
            trigger: ".o_pv_kb_findings_table tbody tr:contains('Widerspruch'), .o_pv_kb_findings_table tbody tr:contains('Conflict')",
            run: "click",
        },
        {
            content: "The list of open conflicts, open the first",
            trigger: ".o_list_view .o_data_row .o_data_cell",
            run: "click",
        },
        {
            content: "The finding names its entries and explains itself",
            trigger: ".o_form_view .o_field_widget[name='message']:contains('lb-')",
        },
        {
            content: "Go to the gaps through the app's menu",
            trigger: ".o_menu_sections .o_nav_entry:contains('Gaps'), .o_menu_sections .o_nav_entry:contains('Lücken')",
            run: "click",
        },
        {
            content: "The gap groups of the question log",
            trigger: ".o_list_view .o_data_row:contains('reisekosten')",
        },
    ],
});
