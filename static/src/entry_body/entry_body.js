import { Component, markup, onMounted, useRef } from "@odoo/owl";
import { registry } from "@web/core/registry";
import { standardFieldProps } from "@web/views/fields/standard_field_props";

const WORD = /[\p{L}\p{N}]+/gu;

function words(text) {
    return (text || "").toLowerCase().match(WORD) || [];
}

/**
 * The element of `root` (paragraph, list item, table row, quote) that holds the most words of `quote`,
 * or null when none holds at least half of them.
 */
export function findPassage(root, quote) {
    const wanted = new Set(words(quote));
    if (!wanted.size) {
        return null;
    }
    let best = null;
    let bestScore = 0;
    for (const el of root.querySelectorAll("p, li, tr, blockquote, td")) {
        const have = new Set(words(el.textContent));
        let score = 0;
        for (const w of wanted) {
            score += have.has(w) ? 1 : 0;
        }
        // the smallest element wins a tie (a cell before its row)
        if (score > bestScore || (score === bestScore && best && el.textContent.length < best.textContent.length)) {
            best = el;
            bestScore = score;
        }
    }
    return bestScore >= wanted.size / 2 ? best : null;
}

/** The entry's rendered text; a passage named in the action context (pv_kb_quote) is scrolled to and marked. */
export class EntryBody extends Component {
    static template = "pv_kb.EntryBody";
    static props = { ...standardFieldProps };

    setup() {
        this.root = useRef("root");
        onMounted(() => {
            const quote = this.props.record.context?.pv_kb_quote;
            const el = quote && this.root.el && findPassage(this.root.el, quote);
            if (el) {
                el.classList.add("o_pv_kb_quote_hl");
                el.scrollIntoView?.({ block: "center" });
            }
        });
    }

    get html() {
        return markup(this.props.record.data[this.props.name] || "");
    }
}

registry.category("fields").add("pv_kb_entry_body", { component: EntryBody, supportedTypes: ["html"] });
