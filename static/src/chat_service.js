/**
 * `pv_kb_chat`: the state of the knowledge base assistant (panel, conversation,
 * streaming answer, history). It lives in a service so that the panel keeps its
 * conversation while the user moves between screens.
 */

import { reactive } from "@odoo/owl";
import { browser } from "@web/core/browser/browser";
import { _t } from "@web/core/l10n/translation";
import { rpc } from "@web/core/network/rpc";
import { registry } from "@web/core/registry";
import { user } from "@web/core/user";
import { applyStreamEvent, makeTurn, readNdjson, turnFromServer } from "./chat_stream";
import { ChatPanel } from "./chat_panel/chat_panel";
import { ChatSystray } from "./chat_systray/chat_systray";
import {
    STREAM_URL,
    DEFAULT_PANEL_WIDTH,
    MAX_QUESTION_LENGTH,
    MIN_PANEL_WIDTH,
    STORAGE_KEY,
    USER_GROUP,
} from "./constants";

/** Browsers are shared: remember panel settings per user. */
export function storageKey() {
    return `${STORAGE_KEY}.${user.userId}`;
}

function readStored() {
    try {
        return JSON.parse(browser.localStorage.getItem(storageKey()) || "{}") || {};
    } catch {
        return {};
    }
}

export class PvKbChat {
    /**
     * @param {object} services the `action`, `notification`, `orm` and `ui` services
     */
    constructor({ action, notification, orm, ui }) {
        this.action = action;
        this.notification = notification;
        this.orm = orm;
        this.ui = ui;
        this.controller = null;
        // placeholder → value of the running conversation (personal-data gate): memory only
        this.piiMapping = null;
        const stored = readStored();
        this.state = reactive({
            available: false,
            isOpen: false,
            expanded: Boolean(stored.expanded),
            width: Math.max(MIN_PANEL_WIDTH, Number(stored.width) || DEFAULT_PANEL_WIDTH),
            view: "chat", // or "history"
            conversationId: Number.isInteger(stored.conversationId) ? stored.conversationId : null,
            conversationName: "",
            turns: [],
            streaming: false,
            loadingConversation: false,
            conversations: [],
            conversationsLoading: false,
            conversationsError: false,
        });
        // A conversation remembered from an earlier page load is fetched on first opening.
        this.needsRestore = this.state.conversationId !== null;
    }

    persist() {
        const { conversationId, width, expanded } = this.state;
        try {
            browser.localStorage.setItem(
                storageKey(),
                JSON.stringify({ conversationId, width, expanded })
            );
        } catch {
            // Storage full or disabled: the panel still works, it just forgets.
        }
    }

    // ----------------------------------------------------------------- panel

    open() {
        this.state.isOpen = true;
        if (this.needsRestore) {
            this.needsRestore = false;
            this.openConversation(this.state.conversationId, { quiet: true });
        }
    }

    close() {
        this.state.isOpen = false;
    }

    toggle() {
        if (this.state.isOpen) {
            this.close();
        } else {
            this.open();
        }
    }

    toggleExpanded() {
        this.state.expanded = !this.state.expanded;
        this.persist();
    }

    /**
     * @param {number} width wanted panel width in pixels (clamped to the window)
     */
    setWidth(width) {
        const max = Math.max(MIN_PANEL_WIDTH, window.innerWidth - 48);
        this.state.width = Math.round(Math.min(max, Math.max(MIN_PANEL_WIDTH, width)));
        this.state.expanded = false;
    }

    toggleHistory() {
        if (this.state.view === "history") {
            this.state.view = "chat";
        } else {
            this.state.view = "history";
            this.loadConversations();
        }
    }

    // ----------------------------------------------------------- conversation

    newConversation() {
        this.stop();
        this.needsRestore = false;
        this.piiMapping = null;
        this.state.turns = [];
        this.state.conversationId = null;
        this.state.conversationName = "";
        this.state.view = "chat";
        this.persist();
    }

    /**
     * Ask a question and stream the answer into a new turn.
     *
     * @param {string} question
     * @returns {Promise<object|null>} the turn, or null when nothing was sent
     */
    async ask(question) {
        question = (question || "").trim();
        if (!question || this.state.streaming || question.length > MAX_QUESTION_LENGTH) {
            return null;
        }
        this.needsRestore = false;
        this.state.view = "chat";
        this.state.turns.push(makeTurn(question));
        const turn = this.state.turns.at(-1); // the reactive proxy
        this.state.streaming = true;
        const controller = new AbortController();
        this.controller = controller;
        try {
            const response = await browser.fetch(STREAM_URL, {
                method: "POST",
                headers: { "Content-Type": "application/json" },
                body: JSON.stringify({
                    question,
                    conversation_id: this.state.conversationId,
                    // placeholders of personal data stay stable within the conversation; the mapping lives in
                    // this page's memory only (never in storage, never stored by the server)
                    pii_mapping: this.piiMapping || null,
                    csrf_token: odoo.csrf_token,
                }),
                signal: controller.signal,
            });
            if (response.status === 403) {
                this.fail(turn, _t("No access: you may not use the knowledge base assistant or this conversation. Start a new conversation; if that does not help, ask your administrator for access."));
            } else if (response.status === 429) {
                const body = await response.json().catch(() => ({}));
                this.fail(turn, body.message || _t("The assistant is busy right now. Please try again in a moment."));
            } else if (response.status === 400) {
                this.fail(turn, _t("The server refused the question. Your session may have expired: please reload the page and ask again."));
            } else if (!response.ok) {
                this.fail(turn, _t("The server answered with error %s. Please try again in a moment.", response.status));
            } else {
                let job = null;
                await readNdjson(
                    response,
                    (event) => {
                        if (event.type === "poll") {
                            job = event;
                        } else {
                            this.applyEvent(turn, event);
                        }
                    },
                    controller.signal
                );
                if (job && !controller.signal.aborted) {
                    await this.followPolled(turn, job, controller.signal);
                }
            }
        } catch (error) {
            if (!controller.signal.aborted) {
                console.warn("pv_kb: answer stream failed", error);
                this.fail(turn, _t("The connection to the server was interrupted. Please check your network and ask again."));
            }
        } finally {
            if (turn.status === "streaming") {
                if (controller.signal.aborted) {
                    turn.stopped = true;
                    turn.status = "stopped";
                } else {
                    this.fail(turn, _t("The answer ended unexpectedly. Please ask again."));
                }
            }
            if (this.controller === controller) {
                this.controller = null;
                this.state.streaming = false;
            }
        }
        return turn;
    }

    /**
     * One answer event into the turn (and the conversation it belongs to).
     *
     * @param {object} turn
     * @param {object} event
     */
    applyEvent(turn, event) {
        if (event.conversation_id && event.conversation_id !== this.state.conversationId) {
            this.state.conversationId = event.conversation_id;
            this.persist();
        }
        if (event.type === "final" && event.pii?.mapping) {
            this.piiMapping = event.pii.mapping;
        }
        applyStreamEvent(turn, event);
    }

    /**
     * The server answered on an HTTP worker that must not be held for the whole answer: the answer runs
     * there on its own and the panel fetches it with short requests until it is done. Stop tells the server.
     *
     * @param {object} turn
     * @param {{job_id: number, interval_ms?: number}} job
     * @param {AbortSignal} signal aborted by Stop
     */
    async followPolled(turn, job, signal) {
        const onStop = () => rpc("/pv_kb/ask/stop", { job_id: job.job_id }).catch(() => {});
        signal.addEventListener("abort", onStop);
        try {
            while (!signal.aborted) {
                await new Promise((resolve) => browser.setTimeout(resolve, job.interval_ms ?? 500));
                if (signal.aborted) {
                    break;
                }
                const state = await rpc("/pv_kb/ask/poll", { job_id: job.job_id }, { silent: true });
                if (signal.aborted) {
                    break;
                }
                for (const event of state?.events || []) {
                    this.applyEvent(turn, event);
                }
                if (state?.done) {
                    break;
                }
            }
        } finally {
            signal.removeEventListener("abort", onStop);
        }
    }

    fail(turn, message) {
        turn.status = "fehler";
        turn.errorMessage = message;
    }

    /** Stop the answer being streamed; the text so far stays visible, marked as stopped. */
    stop() {
        if (!this.controller) {
            return;
        }
        const controller = this.controller;
        this.controller = null;
        this.state.streaming = false;
        controller.abort();
    }

    /**
     * @param {object} turn
     * @param {"up"|"down"} rating
     * @param {string} [comment]
     * @returns {Promise<boolean>} whether the server took it
     */
    async sendFeedback(turn, rating, comment = "") {
        if (!turn.queryId) {
            return false;
        }
        try {
            const result = await rpc("/pv_kb/feedback", {
                query_id: turn.queryId,
                rating,
                comment: comment || "",
            });
            if (result?.ok) {
                turn.feedback = rating;
                if (comment) {
                    turn.feedbackComment = comment;
                    turn.feedbackCommentSent = true;
                }
                return true;
            }
        } catch (error) {
            console.warn("pv_kb: feedback failed", error);
        }
        this.notification.add(_t("Your feedback could not be saved. Please try again."), {
            type: "danger",
        });
        return false;
    }

    async loadConversations() {
        this.state.conversationsLoading = true;
        this.state.conversationsError = false;
        try {
            this.state.conversations = (await rpc("/pv_kb/conversations", {})) || [];
        } catch (error) {
            console.warn("pv_kb: loading conversations failed", error);
            this.state.conversationsError = true;
        } finally {
            this.state.conversationsLoading = false;
        }
    }

    /**
     * Show an earlier conversation with all its turns.
     *
     * @param {number} conversationId
     * @param {{quiet?: boolean}} [options] quiet: forget silently when it no longer exists
     */
    async openConversation(conversationId, { quiet = false } = {}) {
        if (this.state.streaming) {
            this.stop();
        }
        this.state.loadingConversation = true;
        this.state.view = "chat";
        this.piiMapping = null;
        try {
            const data = await rpc("/pv_kb/conversation", { conversation_id: conversationId });
            this.state.conversationId = data.id;
            this.state.conversationName = data.name || "";
            this.state.turns = (data.turns || []).map(turnFromServer);
            this.persist();
        } catch (error) {
            console.warn("pv_kb: loading conversation failed", error);
            if (quiet) {
                this.state.conversationId = null;
                this.persist();
            } else {
                this.notification.add(
                    _t("This conversation could not be opened. It may have been deleted."),
                    { type: "warning" }
                );
            }
        } finally {
            this.state.loadingConversation = false;
        }
    }

    /**
     * Open a knowledge base entry in the main screen; the panel stays open
     * (on small screens it steps aside so the entry can be read).
     *
     * @param {{entryId?: number|null, kbId: string, quote?: string|null,
     *          cell?: {column: number, value: string}|null}} params
     *   quote: a passage of the entry to scroll to and highlight (structured answers, the row of a value);
     *   cell: for a value of a Kernwerte table (an answer from the facts), the cell of that row to mark
     */
    async openEntry({ entryId, kbId, quote = null, cell = null }) {
        let resId = entryId || null;
        if (!resId && kbId) {
            const ids = await this.orm.search("pv.kb.entry", [["kb_id", "=", kbId]], {
                limit: 1,
                context: { active_test: false },
            });
            resId = ids[0] || null;
        }
        if (!resId) {
            this.notification.add(
                _t("The entry %s is not in the knowledge base (any more).", kbId),
                { type: "warning" }
            );
            return;
        }
        if (this.ui.isSmall) {
            this.close();
        }
        await this.action.doAction({
            type: "ir.actions.act_window",
            res_model: "pv.kb.entry",
            res_id: resId,
            views: [[false, "form"]],
            target: "current",
            context: quote
                ? {
                      pv_kb_quote: quote,
                      ...(cell ? { pv_kb_quote_column: cell.column, pv_kb_quote_value: cell.value } : {}),
                  }
                : {},
        });
    }
}

export const pvKbChatService = {
    dependencies: ["action", "notification", "orm", "ui"],
    start(env, services) {
        const chat = new PvKbChat(services);
        user.hasGroup(USER_GROUP)
            .then((allowed) => {
                if (!allowed) {
                    return;
                }
                chat.state.available = true;
                registry.category("main_components").add("pv_kb.ChatPanel", { Component: ChatPanel });
                registry
                    .category("systray")
                    .add("pv_kb.ChatSystray", { Component: ChatSystray }, { sequence: 30 });
            })
            .catch((error) => console.warn("pv_kb: group check failed", error));
        return chat;
    },
};

registry.category("services").add("pv_kb_chat", pvKbChatService);
