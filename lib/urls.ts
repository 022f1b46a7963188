// User-given URLs that may reach a response header (a download's Location, a login's redirect): refused when
// they hold a control character or a space, and kept in the canonical form `new URL()` serialises (ASCII,
// percent-encoded), which every header accepts (docs/security.md, "Response headers").

/** C0 and C1 controls, space and DEL: never part of a URL a person typed or a program built. */
// deno-lint-ignore no-control-regex -- control characters are what it finds
const controlOrSpace = /[\u0000-\u0020\u007f-\u009f]/;

export function hasControlOrSpace(s: string): boolean {
  return controlOrSpace.test(s);
}

/**
 * The canonical form of an absolute http or https URL with a host; undefined when `raw` is not one or holds a
 * control character or a space (the URL parser would drop some of those silently).
 */
export function canonicalHttpUrl(raw: string): string | undefined {
  if (hasControlOrSpace(raw)) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") return undefined;
  return url.href;
}

/**
 * A stored URL made safe for a header: unchanged when it is plain ASCII without controls (every URL stored since
 * validation was added), else re-serialised by the URL parser; undefined when it does not parse.
 */
export function headerSafeUrl(stored: string): string | undefined {
  if (/^[\u0021-\u007e]*$/.test(stored)) return stored;
  try {
    return new URL(stored).href;
  } catch {
    return undefined;
  }
}
