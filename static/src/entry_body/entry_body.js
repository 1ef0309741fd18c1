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

/**
 * The cell of the table row `row` that holds `value`: the cell at `column` (0-based, the label cell first)
 * when it holds all the value's words, else the first cell that does; null when none does.
 */
export function findCell(row, column, value) {
    const wanted = words(value);
    if (!wanted.length) {
        return null;
    }
    const holds = (cell) => {
        const have = new Set(words(cell?.textContent));
        return Boolean(cell) && wanted.every((w) => have.has(w));
    };
    const cells = [...row.children].filter((el) => el.tagName === "TD" || el.tagName === "TH");
    return holds(cells[column]) ? cells[column] : cells.find(holds) || null;
}

/**
 * Mark the passage `quote` in `root`: the element that holds it (o_pv_kb_quote_hl). With `column` (a value of a
 * Kernwerte table, an answer from the facts) the passage's table row is marked lightly (o_pv_kb_quote_row) and
 * the value's cell strongly; a passage outside a table, or a row without the value, is marked as a whole.
 * Returns the element to scroll to, or null when the passage is not found.
 */
export function markQuote(root, quote, { column = null, value = "" } = {}) {
    const el = quote ? findPassage(root, quote) : null;
    if (!el) {
        return null;
    }
    const row = Number.isInteger(column) && column >= 0 ? el.closest("tr") : null;
    const cell = row && findCell(row, column, value);
    if (!cell) {
        el.classList.add("o_pv_kb_quote_hl");
        return el;
    }
    row.classList.add("o_pv_kb_quote_row");
    cell.classList.add("o_pv_kb_quote_hl");
    return cell;
}

/**
 * The entry's rendered text; a passage named in the action context (pv_kb_quote) is scrolled to and marked,
 * for a value of a table (pv_kb_quote_column, pv_kb_quote_value) its cell.
 */
export class EntryBody extends Component {
    static template = "pv_kb.EntryBody";
    static props = { ...standardFieldProps };

    setup() {
        this.root = useRef("root");
        onMounted(() => {
            const context = this.props.record.context || {};
            const el = this.root.el && markQuote(this.root.el, context.pv_kb_quote, {
                column: context.pv_kb_quote_column ?? null,
                value: context.pv_kb_quote_value || "",
            });
            el?.scrollIntoView?.({ block: "center" });
        });
    }

    get html() {
        return markup(this.props.record.data[this.props.name] || "");
    }
}

registry.category("fields").add("pv_kb_entry_body", { component: EntryBody, supportedTypes: ["html"] });
