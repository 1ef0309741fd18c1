/**
 * A small, safe Markdown renderer for the answers of the knowledge base assistant.
 *
 * Safety model: every piece of source text is HTML-escaped before any markup is
 * produced, and the only tags emitted are the ones written in this file. A link becomes
 * clickable only for an http(s) URL the caller lists as allowed (`links`: the server
 * lists the addresses that occur in the cited blocks, lib/answer/links.py); any other
 * link shows its label as text.
 *
 * Supported: headings, paragraphs (single newlines become line breaks), bold,
 * italics, inline code, fenced code, bullet and numbered lists (nested by
 * indentation), tables with alignment, block quotes, rules, links, citation chips
 * (`[lb-atz-07]`, `[a, b]`), "(Stand 2026-01)" badges and "⚠" conflict blocks.
 */

import { _t } from "@web/core/l10n/translation";
import { escape } from "@web/core/utils/strings";

// The entry-id pattern of the server (lib/kb/format.py ENTRY_ID; tests/lib/test_entry_id_pattern.py keeps them
// equal) and the separators of its citation extraction (lib/answer/citations.py).
export const ENTRY_ID_PATTERN = "(?=(?:[0-9]+-)*[0-9]*[a-z])[a-z0-9]+(?:-[a-z0-9]+)+";
const ID = ENTRY_ID_PATTERN;
const ID_RE = new RegExp(ID, "gi");
const CITATION_RE = new RegExp(`\\[\\s*(${ID}(?:\\s*(?:[,;/]|\\bund\\b)\\s*${ID})*)\\s*\\]`, "gi");
const STAND_RE = /\(\s*Stand:?\s*(\d{4}-\d{2}(?:-\d{2})?)\s*\)/gi;
const LINK_RE = /\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g;
const CODE_SPAN_RE = /`([^`\n]+)`/g;
const BOLD_RE = /(\*\*|__)(?=\S)([\s\S]*?\S)\1/g;
const ITALIC_RE = /(^|[^*\w])\*(?=\S)([^*\n]*?\S)\*(?!\*)/g;
const PLACEHOLDER_RE = /\u0001(\d+)\u0002/g;

const HEADING_RE = /^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$/;
const FENCE_RE = /^ {0,3}(```|~~~)/;
const RULE_RE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE_RE = /^ {0,3}> ?/;
const LIST_ITEM_RE = /^( *)([-*+]|\d{1,9}[.)])[ \t]+(.*)$/;
const TABLE_SEPARATOR_RE = /^ *\|? *:?-{2,}:? *(\| *:?-{2,}:? *)*\|? *$/;
const WARNING_RE = /^\s*⚠/;

/**
 * Ids cited in a text, lower-cased, unique, in order of first appearance.
 *
 * @param {string} text
 * @returns {string[]}
 */
export function extractCitationIds(text) {
    const ids = [];
    for (const match of String(text ?? "").matchAll(CITATION_RE)) {
        for (const id of match[1].match(ID_RE)) {
            const kbId = id.toLowerCase();
            if (!ids.includes(kbId)) {
                ids.push(kbId);
            }
        }
    }
    return ids;
}

/**
 * Tooltip text of a citation chip.
 *
 * @param {string} kbId
 * @param {{title?: string, stand?: string}|undefined} citation
 * @returns {string}
 */
export function citationTooltip(kbId, citation) {
    if (!citation) {
        return _t("%(kb_id)s: not among the sources of this answer", { kb_id: kbId });
    }
    if (citation.stand) {
        return _t("%(title)s (as of %(stand)s)", {
            title: citation.title || kbId,
            stand: citation.stand,
        });
    }
    return citation.title || kbId;
}

/** The URL as written in the source (the inline renderer matches links in escaped text). */
function unescapeUrl(url) {
    return url
        .replace(/&quot;/g, '"')
        .replace(/&#x27;/g, "'")
        .replace(/&#39;/g, "'")
        .replace(/&#x60;/g, "`")
        .replace(/&lt;/g, "<")
        .replace(/&gt;/g, ">")
        .replace(/&amp;/g, "&");
}

class InlineRenderer {
    /**
     * @param {Map<string, {kb_id: string, entry_id?: number, title?: string, stand?: string}>} citations
     */
    constructor(citations, links = new Set()) {
        this.citations = citations;
        this.links = links;
        this.slots = [];
    }

    keep(html) {
        this.slots.push(html);
        return `\u0001${this.slots.length - 1}\u0002`;
    }

    chip(kbId) {
        const citation = this.citations.get(kbId);
        const classes = ["o_pv_kb_cite", "btn", "btn-sm", "badge", "rounded-pill"];
        if (!citation) {
            classes.push("o_pv_kb_cite_unknown");
        }
        const entryAttr = citation?.entry_id ? ` data-entry-id="${Number(citation.entry_id)}"` : "";
        return (
            `<button type="button" class="${classes.join(" ")}" data-kb-id="${escape(kbId)}"` +
            `${entryAttr} title="${escape(citationTooltip(kbId, citation))}">${escape(kbId)}</button>`
        );
    }

    /**
     * Render one line (or a paragraph joined by "\n") of raw Markdown source.
     *
     * @param {string} source raw text, not yet escaped
     * @returns {string} HTML
     */
    render(source) {
        // Control characters used as placeholder delimiters cannot come from the text. Code spans are
        // taken from the raw text first: escaping turns their backticks into entities.
        let text = String(source).replace(/[\u0001\u0002]/g, "");
        text = text.replace(CODE_SPAN_RE, (_, code) => this.keep(`<code>${escape(code)}</code>`));
        text = escape(text);
        text = text.replace(LINK_RE, (_, label, url) =>
            this.links.has(unescapeUrl(url))
                ? this.keep(`<a href="${url}" target="_blank" rel="noopener noreferrer">${label}</a>`)
                : label
        );
        text = text.replace(CITATION_RE, (_, inner) => {
            const ids = inner.match(ID_RE).map((id) => id.toLowerCase());
            const chips = ids.map((id) => this.chip(id)).join("");
            return this.keep(`<span class="o_pv_kb_cites">${chips}</span>`);
        });
        text = text.replace(STAND_RE, (_, stand) =>
            this.keep(
                `<span class="badge o_pv_kb_stand" title="${escape(
                    _t("Legal state the value refers to")
                )}">${escape(_t("Stand %s", stand))}</span>`
            )
        );
        text = text.replace(BOLD_RE, "<strong>$2</strong>");
        text = text.replace(ITALIC_RE, "$1<em>$2</em>");
        text = text.replace(/\n/g, "<br/>");
        // Slots may hold other slots (a chip inside a link label is not produced, but be safe).
        let previous;
        do {
            previous = text;
            text = text.replace(PLACEHOLDER_RE, (_, index) => this.slots[Number(index)]);
        } while (text !== previous);
        return text;
    }
}

function splitTableRow(line) {
    let row = line.trim();
    if (row.startsWith("|")) {
        row = row.slice(1);
    }
    if (row.endsWith("|") && !row.endsWith("\\|")) {
        row = row.slice(0, -1);
    }
    // Split on pipes that are not escaped as "\|".
    const cells = [];
    let current = "";
    for (let i = 0; i < row.length; i++) {
        if (row[i] === "\\" && row[i + 1] === "|") {
            current += "|";
            i++;
        } else if (row[i] === "|") {
            cells.push(current.trim());
            current = "";
        } else {
            current += row[i];
        }
    }
    cells.push(current.trim());
    return cells;
}

function isTableStart(lines, index) {
    const line = lines[index];
    return (
        line.includes("|") &&
        index + 1 < lines.length &&
        TABLE_SEPARATOR_RE.test(lines[index + 1]) &&
        lines[index + 1].includes("-")
    );
}

function startsBlock(lines, index) {
    const line = lines[index];
    return (
        HEADING_RE.test(line) ||
        FENCE_RE.test(line) ||
        RULE_RE.test(line) ||
        QUOTE_RE.test(line) ||
        LIST_ITEM_RE.test(line) ||
        isTableStart(lines, index)
    );
}

class BlockRenderer {
    /**
     * @param {InlineRenderer} inline
     */
    constructor(inline) {
        this.inline = inline;
    }

    /**
     * @param {string[]} lines
     * @returns {string}
     */
    render(lines) {
        const out = [];
        let i = 0;
        while (i < lines.length) {
            const line = lines[i];
            if (!line.trim()) {
                i++;
                continue;
            }
            let match;
            if (FENCE_RE.test(line)) {
                const fence = line.trim().slice(0, 3);
                const code = [];
                i++;
                while (i < lines.length && !lines[i].trim().startsWith(fence)) {
                    code.push(lines[i]);
                    i++;
                }
                i++; // closing fence (or end of text)
                out.push(`<pre class="o_pv_kb_code"><code>${escape(code.join("\n"))}</code></pre>`);
            } else if ((match = line.match(HEADING_RE))) {
                const level = match[1].length;
                out.push(`<h${level} class="o_pv_kb_heading">${this.inline.render(match[2])}</h${level}>`);
                i++;
            } else if (RULE_RE.test(line)) {
                out.push("<hr/>");
                i++;
            } else if (isTableStart(lines, i)) {
                i = this.table(lines, i, out);
            } else if (QUOTE_RE.test(line)) {
                const inner = [];
                while (i < lines.length && QUOTE_RE.test(lines[i])) {
                    inner.push(lines[i].replace(QUOTE_RE, ""));
                    i++;
                }
                out.push(`<blockquote class="o_pv_kb_quote">${this.render(inner)}</blockquote>`);
            } else if (LIST_ITEM_RE.test(line)) {
                i = this.list(lines, i, out);
            } else {
                i = this.paragraph(lines, i, out);
            }
        }
        return out.join("");
    }

    paragraph(lines, start, out) {
        const warning = WARNING_RE.test(lines[start]);
        const text = [lines[start].trim()];
        let i = start + 1;
        while (
            i < lines.length &&
            lines[i].trim() &&
            !startsBlock(lines, i) &&
            !WARNING_RE.test(lines[i])
        ) {
            text.push(lines[i].trim());
            i++;
        }
        const html = this.inline.render(text.join("\n"));
        if (!warning) {
            out.push(`<p>${html}</p>`);
            return i;
        }
        // A conflict note keeps a list that follows it directly (one line per side).
        const inner = [`<p>${html}</p>`];
        if (i < lines.length && LIST_ITEM_RE.test(lines[i])) {
            i = this.list(lines, i, inner);
        }
        out.push(`<div class="o_pv_kb_conflict" role="note">${inner.join("")}</div>`);
        return i;
    }

    table(lines, start, out) {
        const header = splitTableRow(lines[start]);
        const aligns = splitTableRow(lines[start + 1]).map((cell) => {
            const left = cell.startsWith(":");
            const right = cell.endsWith(":");
            return left && right ? "center" : right ? "end" : left ? "start" : "";
        });
        const cell = (tag, content, index) => {
            const align = aligns[index] ? ` class="text-${aligns[index]}"` : "";
            return `<${tag}${align}>${this.inline.render(content)}</${tag}>`;
        };
        const rows = [];
        let i = start + 2;
        while (i < lines.length && lines[i].trim() && lines[i].includes("|")) {
            const cells = splitTableRow(lines[i]);
            const padded = header.map((_, index) => cells[index] ?? "");
            rows.push(`<tr>${padded.map((c, index) => cell("td", c, index)).join("")}</tr>`);
            i++;
        }
        out.push(
            `<div class="o_pv_kb_table_wrap"><table class="table table-sm table-bordered o_pv_kb_table">` +
                `<thead><tr>${header.map((c, index) => cell("th", c, index)).join("")}</tr></thead>` +
                `<tbody>${rows.join("")}</tbody></table></div>`
        );
        return i;
    }

    list(lines, start, out) {
        const first = lines[start].match(LIST_ITEM_RE);
        const indent = first[1].length;
        const ordered = /\d/.test(first[2]);
        const items = [];
        let i = start;
        while (i < lines.length) {
            const match = lines[i].match(LIST_ITEM_RE);
            if (!match || match[1].length < indent) {
                // A continuation line (indented, not a new item) joins the current item.
                if (
                    items.length &&
                    lines[i].trim() &&
                    !match &&
                    /^\s+/.test(lines[i]) &&
                    !startsBlock(lines, i)
                ) {
                    items.at(-1).text.push(lines[i].trim());
                    i++;
                    continue;
                }
                break;
            }
            if (match[1].length > indent) {
                // Nested list: everything more indented belongs to the current item.
                const nested = [];
                const sub = [];
                while (i < lines.length) {
                    const m = lines[i].match(LIST_ITEM_RE);
                    if (m && m[1].length <= indent) {
                        break;
                    }
                    if (!m && !/^\s+/.test(lines[i])) {
                        break;
                    }
                    sub.push(lines[i]);
                    i++;
                }
                this.list(sub, 0, nested);
                if (items.length) {
                    items.at(-1).nested.push(...nested);
                } else {
                    out.push(...nested);
                }
                continue;
            }
            if (/\d/.test(match[2]) !== ordered) {
                break;
            }
            items.push({ text: [match[3]], nested: [] });
            i++;
        }
        const html = items.map(({ text, nested }) => {
            const source = text.join("\n");
            const cls = WARNING_RE.test(source) ? ` class="o_pv_kb_conflict"` : "";
            return `<li${cls}>${this.inline.render(source)}${nested.join("")}</li>`;
        });
        const tag = ordered ? "ol" : "ul";
        const startAttr = ordered && parseInt(first[2]) !== 1 ? ` start="${parseInt(first[2])}"` : "";
        out.push(`<${tag}${startAttr}>${html.join("")}</${tag}>`);
        return i;
    }
}

/**
 * The rendered answer through DOMPurify (loaded with Odoo's web client) before it is inserted with
 * `markup()`: a second line of defence behind the renderer, which escapes all text it did not write
 * itself. Keeps what the renderer writes (classes, `data-*`, titles, links opening a new tab).
 *
 * @param {string} html
 * @returns {string}
 */
export function sanitizeAnswerHtml(html) {
    return window.DOMPurify.sanitize(html, { ADD_ATTR: ["target"] });
}

/**
 * Render answer Markdown to an HTML string; insert it through `sanitizeAnswerHtml` and `markup()`.
 *
 * @param {string} source Markdown text (as the model or the server wrote it)
 * @param {{citations?: Array<{kb_id: string, entry_id?: number, title?: string, stand?: string}>, links?: string[]}} [options]
 *      citations: the sources of the answer; they give chips their tooltip and entry id
 *      links: the link addresses allowed to be clickable (exactly as written in the answer); others show their label
 * @returns {string}
 */
export function renderMarkdown(source, { citations = [], links = [] } = {}) {
    const byId = new Map();
    for (const citation of citations || []) {
        if (citation?.kb_id) {
            byId.set(String(citation.kb_id).toLowerCase(), citation);
        }
    }
    const lines = String(source ?? "")
        .replace(/\r\n?/g, "\n")
        .replace(/\t/g, "    ")
        .split("\n");
    return new BlockRenderer(new InlineRenderer(byId, new Set(links || []))).render(lines);
}
