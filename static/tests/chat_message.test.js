import { describe, expect, test } from "@odoo/hoot";
import { queryAllTexts } from "@odoo/hoot-dom";
import { reactive } from "@odoo/owl";
import {
    contains,
    defineWebModels,
    mockService,
    mountWithCleanup,
    onRpc,
} from "@web/../tests/web_test_helpers";
import { ChatMessage } from "@pv_kb/chat_message/chat_message";
import { makeTurn } from "@pv_kb/chat_stream";
import { CITATIONS, finalEvent } from "@pv_kb/../tests/pv_kb_test_helpers";

defineWebModels();

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
