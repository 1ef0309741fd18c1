import { beforeEach, describe, expect, test } from "@odoo/hoot";
import { allowTranslations, defineWebModels } from "@web/../tests/web_test_helpers";
import { extractCitationIds, renderMarkdown, sanitizeAnswerHtml } from "@pv_kb/markdown";
import { CITATIONS, renderToElement } from "@pv_kb/../tests/pv_kb_test_helpers";

defineWebModels();

describe("markdown renderer", () => {
    // Chip tooltips and badges are translated strings; no env is mounted here.
    beforeEach(allowTranslations);

    test("citations become chips with id, entry id and a title/Stand tooltip", () => {
        const el = renderToElement("Der Freibetrag beträgt € 620 [lb-sz-01].");
        const chips = el.querySelectorAll("button.o_pv_kb_cite");
        expect(chips).toHaveLength(1);
        const [chip] = chips;
        expect(chip.dataset.kbId).toBe("lb-sz-01");
        expect(chip.dataset.entryId).toBe("7");
        expect(chip.textContent).toBe("lb-sz-01");
        expect(chip.title).toInclude("Sonderzahlungen – Freibetrag");
        expect(chip.title).toInclude("2026-01");
        expect(el.textContent).not.toInclude("[lb-sz-01]");
    });

    test("a bracket with several ids gives one chip per id; unknown ids are marked", () => {
        const el = renderToElement("Siehe [lb-sz-01, LB-ATZ-07; lb-xx-99].");
        const chips = [...el.querySelectorAll(".o_pv_kb_cite")];
        expect(chips.map((c) => c.dataset.kbId)).toEqual(["lb-sz-01", "lb-atz-07", "lb-xx-99"]);
        expect(chips[1].title).toInclude("Altersteilzeit – Ersatzquote");
        expect(chips[2].classList.contains("o_pv_kb_cite_unknown")).toBe(true);
        expect(chips[2].hasAttribute("data-entry-id")).toBe(false);
        expect(chips[0].classList.contains("o_pv_kb_cite_unknown")).toBe(false);
        expect(extractCitationIds("a [lb-sz-01, lb-atz-07] b [lb-sz-01] [Stand 2026]")).toEqual([
            "lb-sz-01",
            "lb-atz-07",
        ]);
    });

    test("an id with a leading digit is cited like any other; a date in brackets is not", () => {
        const el = renderToElement("Gilt ab 2026 [9x-lohn-02], Stand [2026-01].");
        const chips = [...el.querySelectorAll(".o_pv_kb_cite")];
        expect(chips.map((c) => c.dataset.kbId)).toEqual(["9x-lohn-02"]);
        expect(extractCitationIds("[2024-x-01] [2026-01]")).toEqual(["2024-x-01"]);
    });

    test("only the links the server allows are clickable; others show their label", () => {
        const source = "[Formular](https://www.ams.at/f.pdf?a=1&b=2) und [hier](https://evil.example/x) [lb-sz-01]";
        const el = renderToElement(source, CITATIONS, ["https://www.ams.at/f.pdf?a=1&b=2"]);
        const anchors = [...el.querySelectorAll("a")];
        expect(anchors.map((a) => a.getAttribute("href"))).toEqual(["https://www.ams.at/f.pdf?a=1&b=2"]);
        expect(el.textContent).toInclude("hier");
        expect(el.innerHTML).not.toInclude("evil.example");
        // without a list (while streaming) no link is clickable
        expect(renderToElement(source).querySelectorAll("a")).toHaveLength(0);
    });

    test("links and plain brackets are not taken for citations", () => {
        const el = renderToElement("[siehe oben] und [Infos](https://example.org/x) [2026-01]", CITATIONS, [
            "https://example.org/x",
        ]);
        expect(el.querySelectorAll(".o_pv_kb_cite")).toHaveLength(0);
        const link = el.querySelector("a");
        expect(link.getAttribute("href")).toBe("https://example.org/x");
        expect(link.getAttribute("rel")).toInclude("noopener");
        expect(el.textContent).toInclude("[siehe oben]");
    });

    test("(Stand 2026-01) becomes a small badge", () => {
        const el = renderToElement("Wert € 620 (Stand 2026-01) und 6 % (Stand: 2025-12-31).");
        const badges = [...el.querySelectorAll(".o_pv_kb_stand")];
        expect(badges.map((b) => b.textContent)).toEqual(["Stand 2026-01", "Stand 2025-12-31"]);
        expect(el.textContent).not.toInclude("(Stand");
    });

    test("⚠ lines are set apart in a conflict block, with the list that follows", () => {
        const el = renderToElement(
            [
                "Die Ersatzquote ist strittig [lb-atz-07].",
                "⚠ Widerspruch: [lb-atz-07] (Stand 2025-07) nennt 28,5 %, [lb-sz-01] nennt 27,5 %.",
                "- Seite A: 28,5 %",
                "- Seite B: 27,5 %",
                "",
                "Danach normaler Text.",
            ].join("\n")
        );
        const blocks = el.querySelectorAll(".o_pv_kb_conflict");
        expect(blocks).toHaveLength(1);
        const [block] = blocks;
        expect(block.textContent).toInclude("Widerspruch");
        expect([...block.querySelectorAll(".o_pv_kb_cite")].map((c) => c.dataset.kbId)).toEqual([
            "lb-atz-07",
            "lb-sz-01",
        ]);
        expect(block.querySelectorAll("li")).toHaveLength(2);
        const paragraphs = [...el.children].filter((c) => c.tagName === "P");
        expect(paragraphs.map((p) => p.textContent)).toEqual([
            "Die Ersatzquote ist strittig lb-atz-07.",
            "Danach normaler Text.",
        ]);
    });

    test("a ⚠ list item is marked as conflict", () => {
        const el = renderToElement("- normal\n- ⚠ abweichend [lb-sz-01]");
        const items = el.querySelectorAll("li");
        expect(items[0].classList.contains("o_pv_kb_conflict")).toBe(false);
        expect(items[1].classList.contains("o_pv_kb_conflict")).toBe(true);
    });

    test("tables (Kernwerte) with alignment, inline Markdown and chips in cells", () => {
        const el = renderToElement(
            [
                "## Kernwerte & Fristen",
                "| Wert | Betrag | Quelle |",
                "|:---|---:|:---:|",
                "| Freibetrag | **€ 620** | [lb-sz-01] |",
                "| Steuersatz | 6 % |",
                "",
                "Nachsatz",
            ].join("\n")
        );
        expect(el.querySelector("h2").textContent).toBe("Kernwerte & Fristen");
        const table = el.querySelector("table.o_pv_kb_table");
        expect([...table.querySelectorAll("th")].map((th) => th.textContent)).toEqual([
            "Wert",
            "Betrag",
            "Quelle",
        ]);
        const rows = table.querySelectorAll("tbody tr");
        expect(rows).toHaveLength(2);
        expect(rows[0].querySelectorAll("td")[1].querySelector("strong").textContent).toBe("€ 620");
        expect(rows[0].querySelectorAll("td")[1].className).toBe("text-end");
        expect(rows[0].querySelectorAll("td")[0].className).toBe("text-start");
        expect(rows[0].querySelector(".o_pv_kb_cite").dataset.kbId).toBe("lb-sz-01");
        // A short row is padded to the header width.
        expect(rows[1].querySelectorAll("td")).toHaveLength(3);
        expect(el.lastElementChild.textContent).toBe("Nachsatz");
    });

    test("headings, emphasis, nested and numbered lists, code", () => {
        const el = renderToElement(
            [
                "# Titel",
                "Text mit **fett**, *kursiv* und `code <b>`.",
                "",
                "1. eins",
                "2. zwei",
                "   - unter a",
                "   - unter b",
                "3. drei",
                "",
                "```",
                "<b>roh</b> **nicht fett**",
                "```",
            ].join("\n")
        );
        expect(el.querySelector("h1").textContent).toBe("Titel");
        expect(el.querySelector("p strong").textContent).toBe("fett");
        expect(el.querySelector("p em").textContent).toBe("kursiv");
        expect(el.querySelector("p code").textContent).toBe("code <b>");
        const ol = el.querySelector("ol");
        expect(ol.children).toHaveLength(3);
        expect([...ol.querySelectorAll(":scope > li > ul > li")].map((li) => li.textContent)).toEqual([
            "unter a",
            "unter b",
        ]);
        expect(el.querySelector("pre code").textContent).toBe("<b>roh</b> **nicht fett**");
        expect(el.querySelectorAll("b")).toHaveLength(0);
    });

    test("HTML in the source is escaped, never executed", () => {
        const el = renderToElement(
            '<script>alert(1)</script> <img src=x onerror="alert(2)"> [böse](javascript:alert(3)) **<i>x</i>**'
        );
        expect(el.querySelectorAll("script, img, i, a")).toHaveLength(0);
        expect(el.textContent).toInclude("<script>alert(1)</script>");
        expect(el.textContent).toInclude('<img src=x onerror="alert(2)">');
        const code = renderToElement("Feld `<b>x</b>` und `a & 'b'` [lb-sz-01]").querySelectorAll("code");
        expect([...code].map((c) => c.textContent)).toEqual(["<b>x</b>", "a & 'b'"]);
    });

    test("the rendered answer passes DOMPurify unchanged; what DOMPurify would strip is removed", () => {
        const source = [
            "Der Freibetrag beträgt **€ 620** [lb-sz-01, lb-atz-07] (Stand 2026-01), *vgl.* `§ 67 EStG`.",
            "",
            "| Wert | Betrag |",
            "|---|--:|",
            "| Freibetrag | € 620 [lb-sz-01] |",
            "",
            "⚠ Widerspruch: [lb-sz-01] nennt 620, [lb-x-09] nennt 600.",
            "",
            "> Zitat mit [Link](https://www.bmf.gv.at/a?b=1&c=2)",
            "",
            "1. eins",
            "   - zwei",
        ].join("\n");
        const html = renderMarkdown(source, { citations: CITATIONS, links: ["https://www.bmf.gv.at/a?b=1&c=2"] });
        const parse = (h) => {
            const el = document.createElement("div");
            el.innerHTML = h;
            return el;
        };
        // same elements, attributes and text (DOMPurify may write the attributes in another order)
        expect(parse(sanitizeAnswerHtml(html)).isEqualNode(parse(html))).toBe(true);
        expect(parse(html).querySelectorAll("button[data-kb-id], table, blockquote a, ol ul")).toHaveLength(8);
        expect(html).toInclude('target="_blank"');
        const dirty = sanitizeAnswerHtml(`${html}<img src=x onerror="alert(1)"><a href="javascript:alert(2)">x</a>`);
        expect(dirty).not.toInclude("onerror");
        expect(dirty).not.toInclude("javascript:");
    });

    test("citation titles from the server are escaped in the tooltip", () => {
        const evil = '"><img src=x onerror=alert(1)>';
        const el = renderToElement("Text [lb-sz-01]", [{ kb_id: "lb-sz-01", entry_id: 1, title: evil, stand: "2026-01" }]);
        expect(el.querySelectorAll("img")).toHaveLength(0);
        expect(el.querySelector(".o_pv_kb_cite").title).toInclude(evil);
    });
});
