/** Helpers shared by the pv_kb hoot tests (one test file per component). */
import { queryAllTexts, waitFor, waitUntil } from "@odoo/hoot-dom";
import { contains, mountWithCleanup } from "@web/../tests/web_test_helpers";
import { ChatSystray } from "@pv_kb/chat_systray/chat_systray";
import { renderMarkdown } from "@pv_kb/markdown";

export const CITATIONS = [
    { kb_id: "lb-sz-01", entry_id: 7, title: "Sonderzahlungen – Freibetrag", stand: "2026-01" },
    { kb_id: "lb-atz-07", entry_id: 8, title: "Altersteilzeit – Ersatzquote", stand: "2025-07" },
];

/** Render Markdown into a detached element to inspect the produced DOM. */
export function renderToElement(source, citations = CITATIONS, links = []) {
    const el = document.createElement("div");
    el.innerHTML = renderMarkdown(source, { citations, links });
    return el;
}

/** A ReadableStream the test feeds line by line, like the server's NDJSON answer. */
export function makeNdjsonStream() {
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

export function ndjsonResponse(stream) {
    return new Response(stream, { status: 200, headers: { "Content-Type": "application/x-ndjson" } });
}

export function finalEvent(overrides = {}) {
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

export async function openPanel() {
    await mountWithCleanup(ChatSystray);
    await waitFor(".o_pv_kb_systray_toggle");
    await contains(".o_pv_kb_systray_toggle").click();
    await waitFor(".o_pv_kb_panel");
}

export async function ask(question) {
    await contains(".o_pv_kb_input").edit(question, { confirm: false });
    await contains(".o_pv_kb_input").press("Enter");
}

/** Wait until the last answer body shows `text` (streaming updates are asynchronous). */
export async function waitForAnswerText(text) {
    await waitUntil(() => queryAllTexts(".o_pv_kb_body").at(-1)?.includes(text));
}
