import { describe, expect, test } from "@odoo/hoot";
import { animationFrame, queryAll, queryAllTexts, queryOne, waitFor, waitUntil } from "@odoo/hoot-dom";
import {
    contains,
    defineWebModels,
    getService,
    mountWithCleanup,
    onRpc,
} from "@web/../tests/web_test_helpers";
import { registry } from "@web/core/registry";
import { ChatSystray } from "@pv_kb/chat_systray/chat_systray";
import { storageKey } from "@pv_kb/chat_service";
import {
    ask,
    CITATIONS,
    finalEvent,
    makeNdjsonStream,
    ndjsonResponse,
    openPanel,
    waitForAnswerText,
} from "@pv_kb/../tests/pv_kb_test_helpers";

defineWebModels();

describe("chat panel", () => {
    test("streaming: deltas appear, reset clears, final replaces", async () => {
        const ndjson = makeNdjsonStream();
        const bodies = [];
        onRpc("/websocket/pv_kb/ask/stream", async (request) => {
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
        onRpc("/websocket/pv_kb/ask/stream", async (request) => {
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
        onRpc("/websocket/pv_kb/ask/stream", async (request) => {
            bodies.push(await request.json());
            return ndjsonResponse(first.stream);
        });
        await openPanel();
        await ask("Herr Novak, SV 4711 150372: Überstunden steuerfrei?");
        await waitFor(".o_pv_kb_turn");
        expect(bodies[0].pii_mapping).toBe(null);
        const mapping = { v: 1, items: [["[PERSON_1]", "Novak"], ["[SVNR_1]", "4711 150372"]] };
        first.send({ type: "meta", query_id: 31, conversation_id: 6, retrieved: [CITATIONS[0]], mode: "hybrid" });
        first.send(finalEvent({ pii_count: 2, pii: { count: 2, mapping } }));
        first.close();
        await waitFor(".o_pv_kb_turn[data-status='beantwortet']");
        // the user's own words stay on the screen; the notice counts what was replaced
        expect(".o_pv_kb_question").toHaveText("Herr Novak, SV 4711 150372: Überstunden steuerfrei?");
        expect(".o_pv_kb_pii_notice").toHaveText(
            "2 personal details were replaced by placeholders before processing"
        );
        expect(localStorage.getItem(storageKey())).not.toInclude("4711");

        const second = makeNdjsonStream();
        onRpc("/websocket/pv_kb/ask/stream", async (request) => {
            bodies.push(await request.json());
            return ndjsonResponse(second.stream);
        });
        await ask("Und bei Frau Huber?");
        await waitUntil(() => bodies.length === 2);
        expect(bodies[1]).toMatchObject({ conversation_id: 6, pii_mapping: mapping });
        second.send(finalEvent({ pii_count: 1, pii: { count: 1, mapping } }));
        second.close();
        await waitUntil(() => queryAll(".o_pv_kb_pii_notice").length === 2);
        expect(queryAllTexts(".o_pv_kb_pii_notice")[1]).toBe(
            "1 personal detail was replaced by a placeholder before processing"
        );
    });

    test("an answer served by an HTTP worker is fetched by polling; Stop tells the server", async () => {
        const ndjson = makeNdjsonStream();
        onRpc("/websocket/pv_kb/ask/stream", () => ndjsonResponse(ndjson.stream));
        const states = [
            { events: [{ type: "meta", query_id: null, conversation_id: 4, retrieved: [], mode: "hybrid" },
                       { type: "snapshot", text: "Der Frei" }], done: false },
            { events: [{ type: "snapshot", text: "Der Freibetrag beträgt" }], done: false },
            { events: [finalEvent({ conversation_id: 4, query_id: 9 })], done: true },
        ];
        onRpc("/pv_kb/ask/poll", async (request) => {
            const { params } = await request.json();
            expect.step(`poll ${params.job_id}`);
            return states.shift();
        });
        await openPanel();
        await ask("Freibetrag?");
        ndjson.send({ type: "poll", job_id: 12, interval_ms: 0 });
        ndjson.close();
        await waitFor(".o_pv_kb_turn[data-status='beantwortet']");
        expect.verifySteps(["poll 12", "poll 12", "poll 12"]);
        expect(".o_pv_kb_body").toHaveText(/€ 620/);
        expect(getService("pv_kb_chat").state.conversationId).toBe(4);

        const second = makeNdjsonStream();
        onRpc("/websocket/pv_kb/ask/stream", () => ndjsonResponse(second.stream));
        onRpc("/pv_kb/ask/poll", () => ({ events: [{ type: "snapshot", text: "Halber Satz" }], done: false }));
        let stopped = null;
        onRpc("/pv_kb/ask/stop", async (request) => {
            const { params } = await request.json();
            stopped = params.job_id;
            return { ok: true };
        });
        await ask("Und noch?");
        second.send({ type: "poll", job_id: 13, interval_ms: 0 });
        second.close();
        await waitForAnswerText("Halber Satz");
        await contains(".o_pv_kb_stop").click();
        await waitFor(".o_pv_kb_turn[data-status='stopped']");
        await waitUntil(() => stopped === 13);
        expect(".o_pv_kb_turn[data-status='stopped'] .o_pv_kb_body").toHaveText("Halber Satz");
    });

    test("Stop ends the stream and keeps the text so far", async () => {
        const ndjson = makeNdjsonStream();
        onRpc("/websocket/pv_kb/ask/stream", () => ndjsonResponse(ndjson.stream));
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
        onRpc("/websocket/pv_kb/ask/stream", () => new Response("forbidden", { status: 403 }));
        await openPanel();
        await ask("Frage");
        await waitFor(".o_pv_kb_error");
        expect(".o_pv_kb_error").toHaveText(/No access/);
    });

    test("HTTP 429 shows the server's busy message", async () => {
        const message = "Der Assistent beantwortet gerade andere Fragen. Bitte in einem Moment erneut versuchen.";
        onRpc("/websocket/pv_kb/ask/stream", () => new Response(JSON.stringify({ error: "busy", message }), { status: 429 }));
        await openPanel();
        await ask("Freibetrag?");
        await waitFor(".o_pv_kb_error");
        expect(".o_pv_kb_error").toHaveText(/beantwortet gerade andere Fragen/);
    });

    test("a stream that ends without a final line is reported", async () => {
        const ndjson = makeNdjsonStream();
        onRpc("/websocket/pv_kb/ask/stream", () => ndjsonResponse(ndjson.stream));
        await openPanel();
        await ask("Frage");
        ndjson.send({ type: "delta", text: "abgebrochen" });
        ndjson.close();
        await waitFor(".o_pv_kb_turn[data-status='fehler']");
        expect(".o_pv_kb_error").toHaveText(/ended unexpectedly/);
    });

    test("Enter sends, Shift+Enter does not; counter and limit of 2000 characters", async () => {
        onRpc("/websocket/pv_kb/ask/stream", () => {
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
        onRpc("/websocket/pv_kb/ask/stream", () => ndjsonResponse(ndjson.stream));
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
