// Header values Deno's HTTP layer refuses: it ends the process on a value holding a control character
// (docs/security.md, "Response headers"), so wharf checks every response before handing it over.

/** A control character other than tab: what Deno's HTTP/1 writer refuses in a header value. */
// deno-lint-ignore no-control-regex -- control characters are what it finds
const refusedByDeno = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/**
 * The symbol under which Deno's Headers keep their [name, value] list. Reading it costs a fraction of iterating
 * the Headers (which sorts and combines them on every call) and this check runs on every response.
 */
const headerListKey = Object.getOwnPropertySymbols(new Headers()).find((s) =>
  s.description === "header list"
);

/**
 * The symbol under which Deno's Response keeps its inner response (status, header list, body). Reading its header
 * list leaves the Response as built: the `headers` getter drops the native form Deno.serve sends fastest (a
 * Response built with one headers object) and turns it into a Headers object first (+0.6 µs per request).
 */
const innerResponseKey = Object.getOwnPropertySymbols(new Response()).find((s) =>
  s.description === "response"
);

/** Whether Deno's HTTP layer refuses `value` in a header (in a response it ends the process; in a request, 400). */
export function refusedHeaderValue(value: string): boolean {
  return refusedByDeno.test(value);
}

/** The name of the first header whose value Deno would refuse, or undefined when every value is safe. */
export function refusedHeader(headers: Headers): string | undefined {
  const list = headerListKey && (headers as unknown as Record<symbol, unknown>)[headerListKey];
  if (Array.isArray(list)) {
    for (let i = 0; i < list.length; i++) {
      const [name, value] = list[i] as [string, string];
      if (refusedByDeno.test(value)) return name;
    }
    return undefined;
  }
  for (const [name, value] of headers) if (refusedByDeno.test(value)) return name;
  return undefined;
}

/**
 * The name of the first header of `response` Deno would refuse, read without touching `response.headers`. A
 * Content-Type Deno keeps aside until then (a body given with `{ "content-type": … }` alone) is one of the fixed
 * values its fast path admits: text/plain or application/json.
 */
export function refusedResponseHeader(response: Response): string | undefined {
  const inner = innerResponseKey &&
    (response as unknown as Record<symbol, { headerList?: unknown }>)[innerResponseKey];
  const list = inner?.headerList;
  if (!Array.isArray(list)) return refusedHeader(response.headers);
  for (let i = 0; i < list.length; i++) {
    const [name, value] = list[i] as [string, string];
    if (refusedByDeno.test(value)) return name;
  }
  return undefined;
}
