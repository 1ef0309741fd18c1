/**
 * Reading the answer stream of `POST /pv_kb/ask/stream` (NDJSON: one JSON object per line)
 * and folding its events into a turn of the conversation.
 */

import { _t } from "@web/core/l10n/translation";
import { uniqueId } from "@web/core/utils/functions";

/** Statuses the server can give a final answer. */
export const FINAL_STATUSES = ["beantwortet", "verweigert", "unsicher", "notbetrieb", "fehler"];

/**
 * Splits a byte or text stream into parsed JSON lines. Lines may arrive cut at any
 * point; a line is only parsed once its newline (or the end of the stream) is seen.
 */
export class NdjsonDecoder {
    constructor() {
        this.buffer = "";
        this.textDecoder = new TextDecoder("utf-8");
    }

    /**
     * @param {Uint8Array|string} chunk
     * @returns {object[]} the complete lines of the chunk, parsed
     */
    push(chunk) {
        this.buffer +=
            typeof chunk === "string" ? chunk : this.textDecoder.decode(chunk, { stream: true });
        const lines = this.buffer.split("\n");
        this.buffer = lines.pop();
        return this.parse(lines);
    }

    /**
     * @returns {object[]} whatever was left after the last newline, parsed
     */
    end() {
        const rest = this.buffer + this.textDecoder.decode();
        this.buffer = "";
        return this.parse([rest]);
    }

    parse(lines) {
        const events = [];
        for (const line of lines) {
            const text = line.trim();
            if (!text) {
                continue;
            }
            try {
                const event = JSON.parse(text);
                if (event && typeof event === "object" && typeof event.type === "string") {
                    events.push(event);
                }
            } catch {
                console.warn("pv_kb: ignoring a stream line that is not JSON:", text.slice(0, 200));
            }
        }
        return events;
    }
}

/**
 * A fresh turn for a question; `status` stays "streaming" until the final event.
 *
 * @param {string} question
 * @returns {object}
 */
export function makeTurn(question) {
    return {
        key: uniqueId("pv_kb_turn_"),
        question,
        queryId: null,
        answer: "",
        status: "streaming",
        citations: [],
        links: [],
        retrieved: [],
        violations: [],
        notice: null,
        errorMessage: null,
        feedback: null,
        feedbackComment: "",
        feedbackCommentSent: false,
        stopped: false,
        mode: null,
        timings: null,
        piiCount: 0,
    };
}

/**
 * A turn as stored on the server (`/pv_kb/conversation`), in the client's shape.
 *
 * @param {object} data
 * @returns {object}
 */
export function turnFromServer(data) {
    const turn = makeTurn(data.question || "");
    Object.assign(turn, {
        queryId: data.query_id || null,
        answer: data.answer || "",
        status: data.status === "abgebrochen" ? "stopped" : FINAL_STATUSES.includes(data.status) ? data.status : "fehler",
        citations: data.citations || [],
        links: data.links || [],
        violations: data.violations || [],
        notice: data.notice || null,
        feedback: data.feedback === "up" || data.feedback === "down" ? data.feedback : null,
    });
    return turn;
}

/**
 * Fold one stream event into a turn.
 *
 * @param {object} turn the turn to update (mutated)
 * @param {object} event one parsed NDJSON line
 * @returns {object} the turn
 */
export function applyStreamEvent(turn, event) {
    switch (event.type) {
        case "meta":
            turn.queryId = event.query_id ?? turn.queryId;
            turn.retrieved = event.retrieved || [];
            turn.mode = event.mode || null;
            break;
        case "delta":
            turn.answer += event.text || "";
            break;
        case "reset":
            turn.answer = "";
            break;
        case "final":
            turn.queryId = event.query_id ?? turn.queryId;
            turn.status = FINAL_STATUSES.includes(event.status) ? event.status : "fehler";
            turn.answer = event.answer || "";
            turn.citations = event.citations || [];
            turn.links = event.links || [];
            turn.quotes = event.quotes || [];
            turn.violations = event.violations || [];
            turn.notice = event.notice || null;
            turn.timings = event.timings || null;
            turn.piiCount = event.pii?.count || 0;
            break;
        case "error":
            // text streamed so far never passed validation: it does not stay on screen
            turn.answer = "";
            turn.status = "fehler";
            turn.errorMessage = event.message || _t("The assistant could not answer.");
            break;
    }
    return turn;
}

/**
 * Read an NDJSON response body to its end, calling `onEvent` for each line.
 * Aborting `signal` cancels the body and ends the reading quietly.
 *
 * @param {Response} response
 * @param {(event: object) => void} onEvent
 * @param {AbortSignal} [signal]
 */
export async function readNdjson(response, onEvent, signal) {
    const decoder = new NdjsonDecoder();
    const emit = (events) => {
        for (const event of events) {
            if (signal?.aborted) {
                return;
            }
            onEvent(event);
        }
    };
    if (!response.body?.getReader) {
        // No streaming body: read it whole.
        emit(decoder.push(await response.text()));
        emit(decoder.end());
        return;
    }
    const reader = response.body.getReader();
    const cancel = () => reader.cancel().catch(() => {});
    if (signal?.aborted) {
        cancel();
        return;
    }
    signal?.addEventListener("abort", cancel);
    try {
        while (!signal?.aborted) {
            const { done, value } = await reader.read();
            if (done) {
                break;
            }
            emit(decoder.push(value));
        }
        emit(decoder.end());
    } finally {
        signal?.removeEventListener("abort", cancel);
    }
}
