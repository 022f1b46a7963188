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

/**
 * Block tokens (3 for each table cell, 5 for each list item of one line) a source may have after the block parse:
 * a header of 1,000 columns makes each short row below it 1,000 cells (markdown-it stops autocompleting at 65,536).
 */
export const MAX_BLOCK_TOKENS = 16384;

/**
 * Nesting levels markdown-it parses (its default 100; it drops deeper content, so a deeper source is shown as
 * plain text instead): each level of `>` or list re-reads every line it holds, 90 levels of `>` over 3,500 lines
 * took ~35 ms.
 */
export const MAX_NESTING = 20;

/** Characters of HTML one source may render to as Markdown, above it shown as plain text (at most 5× the source). */
export const MAX_HTML = 256 * 1024;

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

/**
 * Whether a source (line breaks normalised to `\n`) has more markup characters or lines than MAX_MARKUP and
 * MAX_LINES: one linear pass. Table pipes count too: each `|` of a table row makes a cell of three tokens.
 */
function tooMuchMarkup(source: string): boolean {
  let markup = 0;
  let lines = 0;
  for (let at = 0; at < source.length; at++) {
    const char = source[at]!;
    if (char !== "|" && !TERMINATORS.has(char)) continue;
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

/**
 * Bytes of source and HTML the cache keeps (strings counted at 2 bytes a character): at most 640 KiB an entry
 * (64 KiB of source, MAX_HTML of HTML), so at least 102 of the costliest fit, e.g. a box page of 30 versions.
 */
export const HTML_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * Rendered HTML by source text, least recently used first: descriptions are rendered on every read, and rarely
 * change. `null`: shown as plain text, escaped again on each read (linear; up to 5× the source, not kept).
 */
const htmlCache = new Map<string, string | null>();
let htmlCacheBytes = 0;

function entryBytes(source: string, html: string | null): number {
  return 2 * (source.length + (html?.length ?? 0));
}

/** `&`, `<` and `>` escaped: what text inside an element needs. */
function escapeText(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

const markdown = new MarkdownIt({ html: false, linkify: false, maxNesting: MAX_NESTING });

/**
 * Thrown by the block parse at its MAX_BLOCK_TOKENS + 1st token, or when a block opens at MAX_NESTING (whose
 * content markdown-it would drop): the source is shown as plain text, every word of it.
 */
class TooManyBlockTokens extends Error {}

// The block parse stops at MAX_BLOCK_TOKENS: a table's rule pushes every cell it autocompletes, so counting the
// source's characters cannot bound it.
const BlockState = markdown.block.State;
markdown.block.State = class BoundedBlockState extends BlockState {
  override push(...args: Parameters<InstanceType<typeof BlockState>["push"]>) {
    if (this.tokens.length >= MAX_BLOCK_TOKENS) throw new TooManyBlockTokens();
    return super.push(...args);
  }
};
// A block parse entered at MAX_NESTING would drop its lines (markdown-it stops there): plain text instead.
const tokenize = markdown.block.tokenize.bind(markdown.block);
markdown.block.tokenize = (state, startLine, endLine) => {
  if (state.level >= MAX_NESTING && startLine < endLine) throw new TooManyBlockTokens();
  tokenize(state, startLine, endLine);
};

// Between the block and the inline parse: a source whose link openers cost too much is marked and not parsed further.
markdown.core.ruler.before("inline", "wharf_link_scan_bound", (state) => {
  if (!linkScanTooCostly(state.tokens)) return;
  state.env.plainText = true;
  state.tokens = [];
});

function plainText(source: string): string {
  return `<p>${escapeText(source.replaceAll("\0", "\uFFFD"))}</p>\n`;
}

/** `\r\n` and `\r` as `\n`: markdown-it reads them as line breaks too, so what is counted is what is parsed. */
function normalisedLineBreaks(source: string): string {
  return source.replace(/\r\n?/g, "\n");
}

/** Markdown's HTML of a source with normalised line breaks, or null when it is to be shown as plain text. */
function boundedMarkdown(text: string): string | null {
  if (tooMuchMarkup(text)) return null;
  const env: { plainText?: boolean } = {};
  let tokens;
  try {
    tokens = markdown.parse(text, env);
  } catch (error) {
    if (error instanceof TooManyBlockTokens) return null;
    throw error;
  }
  if (env.plainText) return null;
  const html = markdown.renderer.render(tokens, markdown.options, env);
  return html.length > MAX_HTML ? null : html;
}

/**
 * The HTML of a description, cached: Markdown, or one escaped paragraph when its markup is too costly to parse or
 * its HTML would be longer than MAX_HTML.
 */
export function markdownHtml(source: string | null): string | null {
  if (source === null) return null;
  let html = htmlCache.get(source);
  if (html !== undefined) {
    htmlCache.delete(source);
    htmlCache.set(source, html);
    return html ?? plainText(normalisedLineBreaks(source));
  }
  const text = normalisedLineBreaks(source);
  html = boundedMarkdown(text);
  const bytes = entryBytes(source, html);
  for (const [oldest, oldHtml] of htmlCache) {
    if (htmlCacheBytes + bytes <= HTML_CACHE_BYTES) break;
    htmlCache.delete(oldest);
    htmlCacheBytes -= entryBytes(oldest, oldHtml);
  }
  htmlCache.set(source, html);
  htmlCacheBytes += bytes;
  return html ?? plainText(text);
}
