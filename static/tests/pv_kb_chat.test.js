import { beforeEach, describe, expect, test } from "@odoo/hoot";
import { animationFrame, queryAll, queryAllTexts, queryOne, waitFor, waitUntil } from "@odoo/hoot-dom";
import { reactive } from "@odoo/owl";
import {
    allowTranslations,
    contains,
    defineWebModels,
    getService,
    mockService,
    mountWithCleanup,
    onRpc,
} from "@web/../tests/web_test_helpers";
import { registry } from "@web/core/registry";

import { ChatMessage } from "@pv_kb/chat_message/chat_message";
import { applyStreamEvent, makeTurn, NdjsonDecoder } from "@pv_kb/chat_stream";
import { ChatSystray } from "@pv_kb/chat_systray/chat_systray";
import { storageKey } from "@pv_kb/chat_service";
import { escapeHtml, extractCitationIds, renderMarkdown } from "@pv_kb/markdown";

defineWebModels();

const CITATIONS = [
    { kb_id: "lb-sz-01", entry_id: 7, title: "Sonderzahlungen – Freibetrag", stand: "2026-01" },
    { kb_id: "lb-atz-07", entry_id: 8, title: "Altersteilzeit – Ersatzquote", stand: "2025-07" },
];

/** Render Markdown into a detached element to inspect the produced DOM. */
function renderToElement(source, citations = CITATIONS) {
    const el = document.createElement("div");
    el.innerHTML = renderMarkdown(source, { citations });
    return el;
}

/** A ReadableStream the test feeds line by line, like the server's NDJSON answer. */
function makeNdjsonStream() {
    const encoder = new TextEncoder();
    let controller;
    const handle = {
        cancelled: false,
        stream: new ReadableStream({
            start(c) {
                controller = c;
            },
            cancel() {
                handle.cancelled = true;
            },
        }),
        send(...events) {
            controller.enqueue(encoder.encode(events.map((e) => JSON.stringify(e) + "\n").join("")));
        },
        sendText(text) {
            controller.enqueue(encoder.encode(text));
        },
        close() {
            try {
                controller.close();
            } catch {
                // already closed or cancelled
            }
        },
    };
    return handle;
}

function ndjsonResponse(stream) {
    return new Response(stream, { status: 200, headers: { "Content-Type": "application/x-ndjson" } });
}

function finalEvent(overrides = {}) {
    return {
        type: "final",
        status: "beantwortet",
        answer: "Der Freibetrag beträgt **€ 620** [lb-sz-01] (Stand 2026-01).",
        citations: [CITATIONS[0]],
        violations: [],
        notice: null,
        timings: { total_ms: 1200 },
        ...overrides,
    };
}

async function openPanel() {
    await mountWithCleanup(ChatSystray);
    await waitFor(".o_pv_kb_systray_toggle");
    await contains(".o_pv_kb_systray_toggle").click();
    await waitFor(".o_pv_kb_panel");
}

async function ask(question) {
    await contains(".o_pv_kb_input").edit(question, { confirm: false });
    await contains(".o_pv_kb_input").press("Enter");
}

/** Wait until the last answer body shows `text` (streaming updates are asynchronous). */
async function waitForAnswerText(text) {
    await waitUntil(() => queryAllTexts(".o_pv_kb_body").at(-1)?.includes(text));
}

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

    test("links and plain brackets are not taken for citations", () => {
        const el = renderToElement("[siehe oben] und [Infos](https://example.org/x) [2026-01]");
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
        expect(escapeHtml(`<a href="x">'&'</a>`)).toBe(
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    });

    test("citation titles from the server are escaped in the tooltip", () => {
        const evil = '"><img src=x onerror=alert(1)>';
        const el = renderToElement("Text [lb-sz-01]", [{ kb_id: "lb-sz-01", entry_id: 1, title: evil, stand: "2026-01" }]);
        expect(el.querySelectorAll("img")).toHaveLength(0);
        expect(el.querySelector(".o_pv_kb_cite").title).toInclude(evil);
    });
});

describe("answer stream", () => {
    beforeEach(allowTranslations);

    test("the NDJSON decoder joins lines cut anywhere, also inside a UTF-8 character", () => {
        const bytes = new TextEncoder().encode(
            '{"type":"delta","text":"Grüße"}\n{"type":"reset"}\n{"type":"delta","text":"§ 67"}'
        );
        const cut = bytes.indexOf(0xc3) + 1; // inside the two bytes of "ü"
        const decoder = new NdjsonDecoder();
        const first = decoder.push(bytes.slice(0, cut));
        const second = decoder.push(bytes.slice(cut, cut + 20));
        const third = decoder.push(bytes.slice(cut + 20));
        const last = decoder.end();
        expect(first).toEqual([]);
        expect([...second, ...third, ...last]).toEqual([
            { type: "delta", text: "Grüße" },
            { type: "reset" },
            { type: "delta", text: "§ 67" },
        ]);
    });

    test("the decoder skips blank and broken lines", () => {
        const decoder = new NdjsonDecoder();
        const events = decoder.push('\n{"type":"delta","text":"a"}\nnot json\n{"no_type":1}\n');
        expect(events).toEqual([{ type: "delta", text: "a" }]);
    });

    test("deltas append, reset clears, final replaces the text", () => {
        const turn = makeTurn("Frage");
        applyStreamEvent(turn, { type: "meta", query_id: 5, conversation_id: 3, retrieved: CITATIONS, mode: "fts" });
        applyStreamEvent(turn, { type: "delta", text: "Erst" });
        applyStreamEvent(turn, { type: "delta", text: "entwurf" });
        expect(turn.answer).toBe("Erstentwurf");
        expect(turn.queryId).toBe(5);
        expect(turn.mode).toBe("fts");
        applyStreamEvent(turn, { type: "reset" });
        expect(turn.answer).toBe("");
        expect(turn.status).toBe("streaming");
        applyStreamEvent(turn, finalEvent({ status: "unsicher", violations: ["v1"] }));
        expect(turn.status).toBe("unsicher");
        expect(turn.answer).toInclude("€ 620");
        expect(turn.violations).toEqual(["v1"]);
        applyStreamEvent(turn, { type: "final", status: "kaputt", answer: "" });
        expect(turn.status).toBe("fehler");
    });
});

describe("message component", () => {
    function mountTurn(overrides) {
        const turn = reactive({ ...makeTurn("Wie hoch ist der Freibetrag?"), queryId: 11, ...overrides });
        return mountWithCleanup(ChatMessage, { props: { turn }, noMainContainer: true });
    }

    test("beantwortet: no banner, Markdown with chips", async () => {
        await mountTurn({ status: "beantwortet", answer: finalEvent().answer, citations: [CITATIONS[0]] });
        expect(".o_pv_kb_banner").toHaveCount(0);
        expect(".o_pv_kb_body strong").toHaveText("€ 620");
        expect(".o_pv_kb_body .o_pv_kb_cite[data-kb-id='lb-sz-01']").toHaveCount(1);
        expect(".o_pv_kb_body .o_pv_kb_stand").toHaveText("Stand 2026-01");
        expect(".o_pv_kb_question").toHaveText("Wie hoch ist der Freibetrag?");
        expect(".o_pv_kb_feedback_up").toHaveCount(1);
        // Copy puts the Markdown source (not the rendered HTML) on the clipboard.
        await contains(".o_pv_kb_copy").click();
        expect(await navigator.clipboard.readText()).toBe(finalEvent().answer);
    });

    test("unsicher: warning banner listing the violations", async () => {
        await mountTurn({
            status: "unsicher",
            answer: "Text [lb-sz-01]",
            violations: ["Wert 630 steht in keinem Eintrag.", "Satz ohne Quelle."],
        });
        expect(".o_pv_kb_banner_unsicher.alert-warning").toHaveCount(1);
        expect(".o_pv_kb_banner_unsicher").toHaveText(/Answer could not be fully verified/);
        expect(queryAllTexts(".o_pv_kb_violations li")).toEqual([
            "Wert 630 steht in keinem Eintrag.",
            "Satz ohne Quelle.",
        ]);
    });

    test("notbetrieb: info banner", async () => {
        await mountTurn({ status: "notbetrieb", answer: "> Zitat aus [lb-sz-01]", notice: "Ollama nicht erreichbar." });
        expect(".o_pv_kb_banner_notbetrieb.alert-info").toHaveText(
            "Emergency mode: no AI answer, quoting the knowledge base"
        );
        expect(".o_pv_kb_notice").toHaveText("Ollama nicht erreichbar.");
        expect(".o_pv_kb_body blockquote .o_pv_kb_cite").toHaveCount(1);
    });

    test("verweigert: neutral style, no banner", async () => {
        await mountTurn({ status: "verweigert", answer: "Dazu enthält die Wissensbasis keine Aussage." });
        expect(".o_pv_kb_banner").toHaveCount(0);
        expect(".o_pv_kb_answer").toHaveClass("o_pv_kb_answer_verweigert");
        expect(".o_pv_kb_body").toHaveText("Dazu enthält die Wissensbasis keine Aussage.");
    });

    test("fehler: friendly error text with the server's message", async () => {
        await mountTurn({ status: "fehler", answer: "", errorMessage: "Das Sprachmodell antwortet nicht." });
        expect(".o_pv_kb_error").toHaveText(/Sorry, the assistant could not answer this time/);
        expect(".o_pv_kb_error").toHaveText(/Das Sprachmodell antwortet nicht\./);
        expect(".o_pv_kb_body").toHaveCount(0);
        expect(".o_pv_kb_feedback_up").toHaveCount(0);
    });

    test("clicking a chip opens the entry form", async () => {
        mockService("action", {
            doAction(action) {
                expect.step([action.res_model, action.res_id, action.views]);
            },
        });
        await mountTurn({ status: "beantwortet", answer: "A [lb-sz-01, lb-atz-07]", citations: CITATIONS });
        await contains(".o_pv_kb_cite[data-kb-id='lb-atz-07']").click();
        expect.verifySteps([["pv.kb.entry", 8, [[false, "form"]]]]);
    });

    test("a chip without entry id looks the entry up by its id", async () => {
        mockService("action", {
            doAction(action) {
                expect.step(["doAction", action.res_id]);
            },
        });
        onRpc("pv.kb.entry", "search", ({ args }) => {
            expect.step(["search", args[0]]);
            return [42];
        });
        await mountTurn({ status: "beantwortet", answer: "A [lb-zz-01]", citations: [] });
        await contains(".o_pv_kb_cite").click();
        await expect.waitForSteps([["search", [["kb_id", "=", "lb-zz-01"]]], ["doAction", 42]]);
    });

    test("👍 sends feedback and is acknowledged; 👎 opens the comment box", async () => {
        onRpc("/pv_kb/feedback", async (request) => {
            const { params } = await request.json();
            expect.step(params);
            return { ok: true };
        });
        await mountTurn({ status: "beantwortet", answer: "A [lb-sz-01]", citations: CITATIONS });
        expect(".o_pv_kb_feedback_ack").toHaveCount(0);
        await contains(".o_pv_kb_feedback_up").click();
        await expect.waitForSteps([{ query_id: 11, rating: "up", comment: "" }]);
        expect(".o_pv_kb_feedback_ack").toHaveText(/Thank you for your feedback/);
        expect(".o_pv_kb_feedback_up").toHaveClass("active");
        expect(".o_pv_kb_feedback_comment").toHaveCount(0);

        await contains(".o_pv_kb_feedback_down").click();
        await expect.waitForSteps([{ query_id: 11, rating: "down", comment: "" }]);
        expect(".o_pv_kb_feedback_comment textarea").toHaveCount(1);
        await contains(".o_pv_kb_feedback_comment textarea").edit("Wert fehlt");
        await contains(".o_pv_kb_feedback_send").click();
        await expect.waitForSteps([{ query_id: 11, rating: "down", comment: "Wert fehlt" }]);
        expect(".o_pv_kb_feedback_comment").toHaveCount(0);
        expect(".o_pv_kb_feedback_comment_ack").toHaveCount(1);
    });
});

describe("chat panel", () => {
    test("streaming: deltas appear, reset clears, final replaces", async () => {
        const ndjson = makeNdjsonStream();
        const bodies = [];
        onRpc("/pv_kb/ask/stream", async (request) => {
            bodies.push(await request.json());
            return ndjsonResponse(ndjson.stream);
        });
        await openPanel();
        expect(".o_pv_kb_empty").toHaveCount(1);
        await ask("Wie hoch ist der Freibetrag für Sonderzahlungen?");

        await waitFor(".o_pv_kb_turn");
        expect(".o_pv_kb_question").toHaveText("Wie hoch ist der Freibetrag für Sonderzahlungen?");
        expect(".o_pv_kb_input").toHaveValue("");
        expect(".o_pv_kb_input").not.toBeEnabled();
        expect(".o_pv_kb_stop").toHaveCount(1);
        expect(bodies[0]).toMatchObject({
            question: "Wie hoch ist der Freibetrag für Sonderzahlungen?",
            conversation_id: null,
        });

        ndjson.send({ type: "meta", query_id: 21, conversation_id: 4, retrieved: [CITATIONS[0]], mode: "hybrid" });
        ndjson.send({ type: "delta", text: "Erster " });
        ndjson.send({ type: "delta", text: "Entwurf [lb-sz-01]" });
        await waitForAnswerText("Erster Entwurf");
        expect(".o_pv_kb_body .o_pv_kb_cite").toHaveCount(1);
        expect(".o_pv_kb_turn").toHaveAttribute("data-status", "streaming");

        ndjson.send({ type: "reset" });
        await waitFor(".o_pv_kb_thinking");
        expect(".o_pv_kb_body").toHaveCount(0);

        ndjson.sendText('{"type":"delta","te');
        ndjson.sendText('xt":"Neu"}\n');
        await waitForAnswerText("Neu");
        expect(".o_pv_kb_body").toHaveText("Neu");

        ndjson.send(finalEvent());
        ndjson.close();
        await waitFor(".o_pv_kb_turn[data-status='beantwortet']");
        expect(".o_pv_kb_body").toHaveText("Der Freibetrag beträgt € 620 lb-sz-01 Stand 2026-01.");
        expect(".o_pv_kb_body .o_pv_kb_cite").toHaveAttribute("data-entry-id", "7");
        expect(".o_pv_kb_turn").toHaveAttribute("data-query-id", "21");
        expect(".o_pv_kb_input").toBeEnabled();
        expect(".o_pv_kb_stop").toHaveCount(0);
        expect(JSON.parse(localStorage.getItem(storageKey())).conversationId).toBe(4);

        // The next question continues the conversation.
        const second = makeNdjsonStream();
        onRpc("/pv_kb/ask/stream", async (request) => {
            bodies.push(await request.json());
            return ndjsonResponse(second.stream);
        });
        await ask("Und der Steuersatz?");
        await waitUntil(() => bodies.length === 2);
        expect(bodies[1]).toMatchObject({ question: "Und der Steuersatz?", conversation_id: 4 });
        second.send({ type: "error", message: "Das Sprachmodell antwortet nicht." });
        second.close();
        await waitFor(".o_pv_kb_turn[data-status='fehler'] .o_pv_kb_error");
        expect(".o_pv_kb_turn").toHaveCount(2);
        expect(".o_pv_kb_error").toHaveText(/Das Sprachmodell antwortet nicht/);
    });

    test("personal data: notice with the count, the mapping sent back, in memory only", async () => {
        const first = makeNdjsonStream();
        const bodies = [];
        onRpc("/pv_kb/ask/stream", async (request) => {
            bodies.push(await request.json());
            return ndjsonResponse(first.stream);
        });
        await openPanel();
        await ask("Herr Novak, SV 4711 150372: Überstunden steuerfrei?");
        await waitFor(".o_pv_kb_turn");
        expect(bodies[0].pii_mapping).toBe(null);
        const mapping = { v: 1, items: [["[PERSON_1]", "Novak"], ["[SVNR_1]", "4711 150372"]] };
        first.send({ type: "meta", query_id: 31, conversation_id: 6, retrieved: [CITATIONS[0]], mode: "hybrid" });
        first.send(finalEvent({ pii: { count: 2, mapping } }));
        first.close();
        await waitFor(".o_pv_kb_turn[data-status='beantwortet']");
        // the user's own words stay on the screen; the notice counts what was replaced
        expect(".o_pv_kb_question").toHaveText("Herr Novak, SV 4711 150372: Überstunden steuerfrei?");
        expect(".o_pv_kb_pii_notice").toHaveText(
            "2 personal details were replaced by placeholders before processing"
        );
        expect(localStorage.getItem(storageKey())).not.toInclude("4711");

        const second = makeNdjsonStream();
        onRpc("/pv_kb/ask/stream", async (request) => {
            bodies.push(await request.json());
            return ndjsonResponse(second.stream);
        });
        await ask("Und bei Frau Huber?");
        await waitUntil(() => bodies.length === 2);
        expect(bodies[1]).toMatchObject({ conversation_id: 6, pii_mapping: mapping });
        second.send(finalEvent({ pii: { count: 1, mapping } }));
        second.close();
        await waitUntil(() => queryAll(".o_pv_kb_pii_notice").length === 2);
        expect(queryAllTexts(".o_pv_kb_pii_notice")[1]).toBe(
            "1 personal detail was replaced by a placeholder before processing"
        );
    });

    test("Stop ends the stream and keeps the text so far", async () => {
        const ndjson = makeNdjsonStream();
        onRpc("/pv_kb/ask/stream", () => ndjsonResponse(ndjson.stream));
        await openPanel();
        await ask("Frage");
        ndjson.send({ type: "meta", query_id: 1, conversation_id: 2, retrieved: [], mode: "fts" });
        ndjson.send({ type: "delta", text: "Halber Satz" });
        await waitForAnswerText("Halber Satz");
        await contains(".o_pv_kb_stop").click();
        await waitFor(".o_pv_kb_turn[data-status='stopped']");
        expect(".o_pv_kb_stopped").toHaveCount(1);
        expect(".o_pv_kb_body").toHaveText("Halber Satz");
        expect(".o_pv_kb_input").toBeEnabled();
        // The response body was cancelled: nothing more is read from the server.
        await waitUntil(() => ndjson.cancelled);
        expect(() => ndjson.send(finalEvent())).toThrow();
        await animationFrame();
        expect(".o_pv_kb_body").toHaveText("Halber Satz");
        expect(".o_pv_kb_feedback_up").toHaveCount(0);
    });

    test("HTTP 403 shows that the user has no access", async () => {
        onRpc("/pv_kb/ask/stream", () => new Response("forbidden", { status: 403 }));
        await openPanel();
        await ask("Frage");
        await waitFor(".o_pv_kb_error");
        expect(".o_pv_kb_error").toHaveText(/No access/);
    });

    test("a stream that ends without a final line is reported", async () => {
        const ndjson = makeNdjsonStream();
        onRpc("/pv_kb/ask/stream", () => ndjsonResponse(ndjson.stream));
        await openPanel();
        await ask("Frage");
        ndjson.send({ type: "delta", text: "abgebrochen" });
        ndjson.close();
        await waitFor(".o_pv_kb_turn[data-status='fehler']");
        expect(".o_pv_kb_error").toHaveText(/ended unexpectedly/);
    });

    test("Enter sends, Shift+Enter does not; counter and limit of 2000 characters", async () => {
        onRpc("/pv_kb/ask/stream", () => {
            expect.step("ask");
            return ndjsonResponse(makeNdjsonStream().stream);
        });
        await openPanel();
        await contains(".o_pv_kb_input").edit("Erste Zeile", { confirm: false });
        expect(".o_pv_kb_counter").toHaveText("11 / 2000");
        await contains(".o_pv_kb_input").press(["Shift", "Enter"]);
        await animationFrame();
        expect.verifySteps([]);
        expect(".o_pv_kb_turn").toHaveCount(0);

        await contains(".o_pv_kb_input").edit("x".repeat(2001), { confirm: false, instantly: true });
        expect(".o_pv_kb_counter").toHaveText("2001 / 2000");
        expect(".o_pv_kb_counter").toHaveClass("text-danger");
        expect(".o_pv_kb_send").not.toBeEnabled();
        await contains(".o_pv_kb_input").press("Enter");
        await animationFrame();
        expect.verifySteps([]);

        await contains(".o_pv_kb_input").edit("x".repeat(2000), { confirm: false, instantly: true });
        expect(".o_pv_kb_send").toBeEnabled();
        await contains(".o_pv_kb_input").press("Enter");
        await expect.waitForSteps(["ask"]);
    });

    test("history lists earlier conversations and reopens one with its turns", async () => {
        onRpc("/pv_kb/conversations", () => [
            { id: 9, name: "Freibetrag Sonderzahlungen", date: "2026-01-15 10:00:00" },
            { id: 8, name: "Altersteilzeit", date: "2026-01-10" },
        ]);
        onRpc("/pv_kb/conversation", async (request) => {
            const { params } = await request.json();
            expect.step(params.conversation_id);
            return {
                id: 9,
                name: "Freibetrag Sonderzahlungen",
                turns: [
                    {
                        query_id: 31,
                        question: "Wie hoch ist der Freibetrag?",
                        answer: "€ 620 [lb-sz-01]",
                        status: "beantwortet",
                        citations: [CITATIONS[0]],
                        violations: [],
                        notice: null,
                        feedback: "up",
                    },
                    {
                        query_id: 32,
                        question: "Und sonst?",
                        answer: "Unklar [lb-atz-07]",
                        status: "unsicher",
                        citations: [CITATIONS[1]],
                        violations: ["Satz ohne Quelle."],
                        notice: null,
                        feedback: false,
                    },
                ],
            };
        });
        await openPanel();
        await contains(".o_pv_kb_history_toggle").click();
        await waitFor(".o_pv_kb_history_item");
        expect(queryAllTexts(".o_pv_kb_history_item .text-truncate")).toEqual([
            "Freibetrag Sonderzahlungen",
            "Altersteilzeit",
        ]);
        expect(".o_pv_kb_composer").toHaveCount(0);
        await contains(".o_pv_kb_history_item[data-conversation-id='9']").click();
        await expect.waitForSteps([9]);
        await waitFor(".o_pv_kb_turn");
        expect(queryAllTexts(".o_pv_kb_question")).toEqual(["Wie hoch ist der Freibetrag?", "Und sonst?"]);
        expect(".o_pv_kb_conversation_name").toHaveText("Freibetrag Sonderzahlungen");
        expect(".o_pv_kb_turn:eq(0) .o_pv_kb_feedback_up").toHaveClass("active");
        expect(".o_pv_kb_turn:eq(1) .o_pv_kb_banner_unsicher").toHaveCount(1);
        expect(".o_pv_kb_turn:eq(1) .o_pv_kb_cite").toHaveAttribute("data-entry-id", "8");

        // "New conversation" empties the panel and forgets the conversation.
        await contains(".o_pv_kb_new").click();
        expect(".o_pv_kb_turn").toHaveCount(0);
        expect(".o_pv_kb_empty").toHaveCount(1);
        expect(getService("pv_kb_chat").state.conversationId).toBe(null);
    });

    test("the panel keeps its conversation when closed and reopened", async () => {
        const ndjson = makeNdjsonStream();
        onRpc("/pv_kb/ask/stream", () => ndjsonResponse(ndjson.stream));
        await openPanel();
        await ask("Frage eins");
        ndjson.send({ type: "meta", query_id: 1, conversation_id: 2, retrieved: [], mode: "fts" });
        ndjson.send(finalEvent());
        ndjson.close();
        await waitFor(".o_pv_kb_turn[data-status='beantwortet']");
        await contains(".o_pv_kb_close").click();
        expect(".o_pv_kb_panel").toHaveCount(0);
        await contains(".o_pv_kb_systray_toggle").click();
        expect(".o_pv_kb_panel .o_pv_kb_turn").toHaveCount(1);
        expect(".o_pv_kb_question").toHaveText("Frage eins");
    });

    test("expand toggles near full width; the width is remembered", async () => {
        await openPanel();
        expect(".o_pv_kb_panel").not.toHaveClass("o_pv_kb_panel_expanded");
        expect(queryOne(".o_pv_kb_panel").style.width).toBe("460px");
        await contains(".o_pv_kb_expand").click();
        expect(".o_pv_kb_panel").toHaveClass("o_pv_kb_panel_expanded");
        expect(JSON.parse(localStorage.getItem(storageKey())).expanded).toBe(true);
        await contains(".o_pv_kb_expand").click();
        getService("pv_kb_chat").setWidth(600);
        await animationFrame();
        expect(queryOne(".o_pv_kb_panel").style.width).toBe("600px");
        getService("pv_kb_chat").setWidth(10);
        await animationFrame();
        expect(queryOne(".o_pv_kb_panel").style.width).toBe("320px");
    });

    test("the conversation remembered from the last visit is reopened on first opening", async () => {
        onRpc("/pv_kb/conversation", async (request) => {
            const { params } = await request.json();
            expect.step(params.conversation_id);
            return {
                id: 5,
                name: "Vom letzten Mal",
                turns: [
                    {
                        query_id: 50,
                        question: "Alte Frage",
                        answer: "Alte Antwort [lb-sz-01]",
                        status: "beantwortet",
                        citations: [CITATIONS[0]],
                        violations: [],
                        notice: null,
                        feedback: null,
                    },
                ],
            };
        });
        localStorage.setItem(storageKey(), JSON.stringify({ conversationId: 5, width: 500, expanded: false }));
        await openPanel();
        await expect.waitForSteps([5]);
        await waitFor(".o_pv_kb_turn");
        expect(".o_pv_kb_question").toHaveText("Alte Frage");
        expect(queryOne(".o_pv_kb_panel").style.width).toBe("500px");
    });

    test("a remembered conversation that is gone is forgotten quietly", async () => {
        onRpc("/pv_kb/conversation", () => {
            throw new Error("This conversation does not exist or is not yours.");
        });
        localStorage.setItem(storageKey(), JSON.stringify({ conversationId: 77 }));
        await openPanel();
        await waitUntil(() => getService("pv_kb_chat").state.conversationId === null);
        expect(".o_pv_kb_empty").toHaveCount(1);
        expect(".o_notification").toHaveCount(0);
        expect(JSON.parse(localStorage.getItem(storageKey())).conversationId).toBe(null);
    });

    test("users outside the pv_kb user group see nothing", async () => {
        onRpc("has_group", ({ args }) => args[1] !== "pv_kb.group_pv_kb_user");
        await mountWithCleanup(ChatSystray);
        await animationFrame();
        expect(".o_pv_kb_systray").toHaveCount(0);
        expect(".o_pv_kb_panel").toHaveCount(0);
        expect(registry.category("systray").contains("pv_kb.ChatSystray")).toBe(false);
        expect(registry.category("main_components").contains("pv_kb.ChatPanel")).toBe(false);
        expect(queryAll(".o_pv_kb_systray_toggle")).toHaveLength(0);
    });
});
