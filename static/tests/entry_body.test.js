import { describe, expect, test } from "@odoo/hoot";

import { findCell, findPassage, markQuote } from "@pv_kb/entry_body/entry_body";

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

    test("a value from the facts: the row lightly, the value's cell strongly", () => {
        const root = body(
            "<p>Die Geringfügigkeitsgrenze 2025 steht in der Tabelle.</p>" +
                "<table><tr><th>Wert</th><th>2025</th><th>2024</th></tr>" +
                "<tr><td>Geringfügigkeitsgrenze monatlich</td><td>€ 551,10</td><td>€ 518,44</td></tr>" +
                "<tr><td>Geringfügigkeitsgrenze jährlich</td><td>€ 6.613,20</td><td>€ 6.221,28</td></tr></table>"
        );
        const el = markQuote(root, "| Geringfügigkeitsgrenze monatlich | € 551,10 | € 518,44 |", {
            column: 1,
            value: "€ 551,10",
        });
        expect(el.textContent).toBe("€ 551,10");
        expect(root.querySelectorAll(".o_pv_kb_quote_hl")).toHaveLength(1);
        expect(el.parentElement.classList.contains("o_pv_kb_quote_row")).toBe(true);
        expect(el.parentElement.classList.contains("o_pv_kb_quote_hl")).toBe(false);
        expect(root.querySelector(".o_pv_kb_quote_row").textContent).toInclude("monatlich");
    });

    test("the value's cell is found by its text when the column does not hold it", () => {
        const row = body("<table><tr><td>Kilometergeld Pkw</td><td>ab 2025</td><td>€ 0,50</td></tr></table>")
            .querySelector("tr");
        expect(findCell(row, 2, "€ 0,50").textContent).toBe("€ 0,50");
        expect(findCell(row, 1, "€ 0,50").textContent).toBe("€ 0,50");
        expect(findCell(row, 1, "€ 0,42")).toBe(null);
    });

    test("other citations, and a value without its cell, mark the passage as a whole", () => {
        const root = body(
            "<p>Die ersten € 620 sind steuerfrei, darüber gilt 6 %.</p>" +
                "<table><tr><td>Freigrenze</td><td>€ 2.100</td></tr></table>"
        );
        expect(markQuote(root, "Die ersten € 620 sind steuerfrei").tagName).toBe("P");
        expect(markQuote(root, "Freigrenze € 2.100", { column: 1, value: "€ 3.000" }).tagName).toBe("TR");
        expect(root.querySelectorAll(".o_pv_kb_quote_row")).toHaveLength(0);
        expect(root.querySelectorAll(".o_pv_kb_quote_hl")).toHaveLength(2);
        expect(markQuote(root, "Kilometergeld beträgt 50 Cent je Kilometer", { column: 1, value: "50" })).toBe(null);
    });

    test("finds nothing for a passage that is not there", () => {
        const root = body("<p>Die ersten € 620 sind steuerfrei.</p>");
        expect(findPassage(root, "Kilometergeld beträgt 50 Cent je Kilometer")).toBe(null);
        expect(findPassage(root, "")).toBe(null);
    });
});
