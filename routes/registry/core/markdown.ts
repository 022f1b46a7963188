// Markdown to HTML for descriptions and profiles: markdown-it with raw HTML escaped, a plain-text rendering for
// sources whose markup would cost too much to parse, and a least-recently-used cache bounded in bytes.

import MarkdownIt from "markdown-it";

/**
 * Markup characters (TERMINATORS) and lines a source may have to be parsed as Markdown: markdown-it spends ~1 µs
 * on each inline token and ~4 µs on each line of a block (16,384 list items of `- [`: ~70 ms). Dense real documents
 * of 64 KiB (Node.js's API docs) have at most ~8,300 and ~2,500 (docs/security.md#descriptions-and-profiles).
 */
export const MAX_MARKUP = 16384;
export const MAX_LINES = 4096;

/**
 * Work the inline parser may spend on link and image openers, in characters that end a text run scanned past
 * (docs/security.md#descriptions-and-profiles). markdown-it 15 scans from each `[` to its matching `]` (or to the
 * end of the paragraph) token by token: a 64 KiB description of `![` took ~210 ms, 2,048 `![` before 32 Ki `*_`
 * ~340 ms. Measured ~1–2.5 ns a unit; a real README spends a few units on each link.
 */
export const MAX_LINK_SCAN = 2_000_000;

/** The characters markdown-it's text rule stops at: each starts a token a link label scan steps over. */
const TERMINATORS = new Set("\n!#$%&*+-:<=>@[\\]^_`{}~");

/**
 * An upper bound of the link-label scanning in one paragraph: the terminators from each `[` to its `]`, or to the
 * end when the paragraph has a backtick or `<` (a code span or autolink hides the `]` inside it from the scan).
 * Escaped brackets (`\[`, `\]`) neither open nor close.
 */
function linkScanCost(text: string): number {
  const closes = !text.includes("`") && !text.includes("<");
  let terminators = 0;
  let cost = 0;
  const open: number[] = [];
  for (let at = 0; at < text.length; at++) {
    const char = text[at]!;
    if (!TERMINATORS.has(char)) continue;
    terminators++;
    if (char === "\\") at++;
    else if (char === "[") open.push(terminators);
    else if (char === "]" && closes && open.length) cost += terminators - open.pop()!;
  }
  for (const at of open) cost += terminators - at;
  return cost;
}

/** Whether a source has more markup characters or lines than MAX_MARKUP and MAX_LINES: one linear pass. */
function tooMuchMarkup(source: string): boolean {
  let markup = 0;
  let lines = 0;
  for (let at = 0; at < source.length; at++) {
    const char = source[at]!;
    if (!TERMINATORS.has(char)) continue;
    if (++markup > MAX_MARKUP) return true;
    if (char === "\n" && ++lines > MAX_LINES) return true;
  }
  return false;
}

/** Whether the paragraphs of a block parse would make the inline parser scan more than MAX_LINK_SCAN. */
function linkScanTooCostly(tokens: { type: string; content: string }[]): boolean {
  let cost = 0;
  for (const token of tokens) {
    if (token.type !== "inline" || !token.content.includes("[")) continue;
    cost += linkScanCost(token.content);
    if (cost > MAX_LINK_SCAN) return true;
  }
  return false;
}

/** Bytes of source and HTML the cache keeps (strings counted at 2 bytes a character). */
export const HTML_CACHE_BYTES = 32 * 1024 * 1024;

/** Rendered HTML by source text, least recently used first: descriptions are rendered on every read, and rarely change. */
const htmlCache = new Map<string, string>();
let htmlCacheBytes = 0;

function entryBytes(source: string, html: string): number {
  return 2 * (source.length + html.length);
}

/** `&`, `<` and `>` escaped: what text inside an element needs. */
function escapeText(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

const markdown = new MarkdownIt({ html: false, linkify: false });
// Between the block and the inline parse: a source whose link openers cost too much is marked and not parsed further.
markdown.core.ruler.before("inline", "wharf_link_scan_bound", (state) => {
  if (!linkScanTooCostly(state.tokens)) return;
  state.env.plainText = true;
  state.tokens = [];
});

function plainText(source: string): string {
  return `<p>${escapeText(source.replaceAll("\0", "\uFFFD"))}</p>\n`;
}

/** The HTML of one source, uncached: Markdown, or one escaped paragraph when its markup is too costly to parse. */
export function renderMarkdown(source: string): string {
  if (tooMuchMarkup(source)) return plainText(source);
  const env: { plainText?: boolean } = {};
  const tokens = markdown.parse(source, env);
  return env.plainText ? plainText(source) : markdown.renderer.render(tokens, markdown.options, env);
}

export function markdownHtml(source: string | null): string | null {
  if (source === null) return null;
  let html = htmlCache.get(source);
  if (html !== undefined) {
    htmlCache.delete(source);
    htmlCache.set(source, html);
    return html;
  }
  html = renderMarkdown(source);
  const bytes = entryBytes(source, html);
  if (bytes > HTML_CACHE_BYTES) return html;
  for (const [oldest, oldHtml] of htmlCache) {
    if (htmlCacheBytes + bytes <= HTML_CACHE_BYTES) break;
    htmlCache.delete(oldest);
    htmlCacheBytes -= entryBytes(oldest, oldHtml);
  }
  htmlCache.set(source, html);
  htmlCacheBytes += bytes;
  return html;
}
