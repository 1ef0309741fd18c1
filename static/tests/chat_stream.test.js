import { beforeEach, describe, expect, test } from "@odoo/hoot";
import { allowTranslations, defineWebModels } from "@web/../tests/web_test_helpers";
import { applyStreamEvent, makeTurn, NdjsonDecoder, turnFromServer } from "@pv_kb/chat_stream";
import { CITATIONS, finalEvent } from "@pv_kb/../tests/pv_kb_test_helpers";

defineWebModels();

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

    test("an error clears text that never passed validation; pings change nothing", () => {
        const turn = makeTurn("Frage");
        applyStreamEvent(turn, { type: "delta", text: "Ungeprüfter Entwurf mit € 999" });
        applyStreamEvent(turn, { type: "ping" });
        expect(turn.answer).toBe("Ungeprüfter Entwurf mit € 999");
        expect(turn.status).toBe("streaming");
        applyStreamEvent(turn, { type: "error", message: "Zeitlimit erreicht" });
        expect(turn.answer).toBe("");
        expect(turn.status).toBe("fehler");
        expect(turn.errorMessage).toBe("Zeitlimit erreicht");
    });

    test("a stopped answer from the history shows as stopped", () => {
        const turn = turnFromServer({ question: "Frage", answer: "", status: "abgebrochen" });
        expect(turn.status).toBe("stopped");
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

    test("a turn from the stream's final event and the same turn reloaded look the same", () => {
        const server = {
            query_id: 7, conversation_id: 3, question: "Frage", status: "beantwortet", answer: "Antwort [lb-sz-01]",
            citations: CITATIONS, quotes: [{ kb_id: "lb-sz-01", passage: "Satz" }], violations: [],
            notice: null, answer_mode: "structured", mode: "hybrid", timings: { total_ms: 12.5 }, pii_count: 1,
            feedback: null,
        };
        const live = makeTurn("Frage");
        applyStreamEvent(live, { type: "meta", query_id: null, conversation_id: 3, retrieved: CITATIONS, mode: "hybrid" });
        applyStreamEvent(live, { type: "delta", text: "Antwort" });
        applyStreamEvent(live, { ...server, type: "final", pii: { count: 1, mapping: null } });
        const reloaded = turnFromServer(server);
        const shown = ({ key, retrieved, ...rest }) => rest;
        expect(shown(live)).toEqual(shown(reloaded));
        expect(reloaded.quotes).toEqual([{ kb_id: "lb-sz-01", passage: "Satz" }]);
        expect(reloaded.answerMode).toBe("structured");
    });
});
