// HTML built only through the `html` tagged template: every interpolated value is escaped unless it is already
// Html (a fragment built the same way, or markdown the registry rendered with raw HTML escaped).

export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const entities: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Text made safe for element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return /[&<>"']/.test(text) ? text.replace(/[&<>"']/g, (c) => entities[c]!) : text;
}

function fragment(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (value === null || value === undefined || value === false) return "";
  if (Array.isArray(value)) return value.map(fragment).join("");
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += fragment(values[i]) + strings[i + 1]!;
  return new Html(out);
}

/**
 * A table in a region that scrolls sideways on narrow screens (keyboard-focusable, labelled `label`): `columns`
 * are the header cells (empty ones are left out), `rows` the body's `<tr>`s.
 */
export function dataTable(
  columns: readonly (string | false)[],
  rows: unknown,
  label = "Scrollable table",
): Html {
  const heads = columns.filter((c): c is string => c !== false);
  return html`
    <div class="table-wrap" tabindex="0" role="region" aria-label="${label}">
      <table>
        <thead>
          <tr>${heads.map((c) => html`<th scope="col">${c}</th>`)}</tr>
        </thead>
        <tbody>${rows}</tbody>
      </table>
    </div>
  `;
}

/** Trusted markup (only for text wharf produced itself, e.g. markdown rendered with html:false). */
export function trusted(markup: string): Html {
  return new Html(markup);
}

/** A path segment for links (names may contain dots, never slashes). */
export function seg(name: string): string {
  return encodeURIComponent(name);
}

/** An external link target, only when it is http(s): anything else (javascript:, data:) becomes inert. */
export function safeHref(url: string | null | undefined): string {
  return url && /^https?:\/\//i.test(url) ? url : "#";
}

/** Bytes for people: 1.5 GB. */
export function formatBytes(n: number): string {
  const units = ["bytes", "KB", "MB", "GB", "TB"];
  let i = 0;
  let v = n;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** A date for people (UTC, to the minute), with the machine-readable value kept in <time>. */
export function timeTag(iso: string | null | undefined): Html {
  if (!iso) return html`—`;
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace("T", " ")} UTC</time>`;
}
