import { Component, onWillStart, useState } from "@odoo/owl";
import { registry } from "@web/core/registry";
import { useService } from "@web/core/utils/hooks";
import { _t } from "@web/core/l10n/translation";

/** Wissensbasis › Übersicht: tiles with the numbers of the health check and the question log.
 *  Trends open Odoo's own graph/pivot views; every tile links to the list behind it. */
export class HealthDashboard extends Component {
    static template = "pv_kb.HealthDashboard";
    static props = ["*"];

    setup() {
        this.orm = useService("orm");
        this.action = useService("action");
        this.state = useState({ data: null, running: false });
        onWillStart(() => this.load());
    }

    async load() {
        this.state.data = await this.orm.call("pv.kb.health.run", "action_dashboard_data", [[]]);
    }

    percent(value) {
        return `${(100 * (value || 0)).toFixed(1)} %`;
    }

    async runNow() {
        this.state.running = true;
        try {
            const result = await this.orm.call("pv.kb.health.run", "action_run_now", [[]]);
            const params = result && result.params;
            if (params) {
                this.env.services.notification.add(params.message, { title: params.title, type: "success" });
            }
            await this.load();
        } finally {
            this.state.running = false;
        }
    }

    openFindings(kind, severity) {
        const domain = [["state", "=", "open"]];
        if (kind) {
            domain.push(["kind", "=", kind]);
        }
        if (severity) {
            domain.push(["severity", "=", severity]);
        }
        this.action.doAction({
            type: "ir.actions.act_window",
            name: _t("Findings"),
            res_model: "pv.kb.finding",
            views: [[false, "list"], [false, "form"], [false, "pivot"]],
            domain,
        });
    }

    open(xmlid) {
        this.action.doAction(xmlid);
    }

    openBatch(id) {
        this.action.doAction({ type: "ir.actions.act_window", res_model: "pv.kb.batch", res_id: id,
                               views: [[false, "form"]] });
    }
}

registry.category("actions").add("pv_kb.dashboard", HealthDashboard);
