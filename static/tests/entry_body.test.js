import { describe, expect, test } from "@odoo/hoot";

import { findPassage } from "@pv_kb/entry_body/entry_body";

function body(html) {
    const el = document.createElement("div");
    el.innerHTML = html;
    return el;
}

describe("entry body", () => {
    test("finds the paragraph or table cell a quote comes from", () => {
        const root = body(
            "<p>Allgemeines zur Sonderzahlung.</p>" +
                "<p>Die ersten € 620 sind steuerfrei, darüber gilt 6 %.</p>" +
                "<table><tr><td>Freigrenze</td><td>€ 2.100</td></tr></table>"
        );
        expect(findPassage(root, "Die ersten € 620 sind steuerfrei").textContent).toBe(
            "Die ersten € 620 sind steuerfrei, darüber gilt 6 %."
        );
        expect(findPassage(root, "Freigrenze € 2.100").tagName).toBe("TR");
    });

    test("finds nothing for a passage that is not there", () => {
        const root = body("<p>Die ersten € 620 sind steuerfrei.</p>");
        expect(findPassage(root, "Kilometergeld beträgt 50 Cent je Kilometer")).toBe(null);
        expect(findPassage(root, "")).toBe(null);
    });
});
