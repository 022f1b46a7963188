// A request's path read from its URL without parsing it when it needs no normalisation.

/**
 * The path of an absolute request URL, in one pass over its characters, when it needs no normalisation (no
 * dot segments, percent-escapes or backslashes); runs of "/" are collapsed. Undefined means "parse it with
 * URL". This runs once per request: one scan and one slice instead of several searches and a regex.
 */
export function requestPath(href: string): string | undefined {
  const scheme = href.indexOf("://");
  const start = scheme < 0 ? -1 : href.indexOf("/", scheme + 3);
  if (start < 0) return undefined;
  let end = href.length;
  let doubled = false;
  for (let i = start + 1; i < end; i++) {
    const c = href.charCodeAt(i);
    if (c === 0x3f || c === 0x23) end = i; // "?" or "#": the path ends here
    else if (c === 0x2e || c === 0x25 || c === 0x5c) return undefined; // ".", "%", "\\"
    else if (c === 0x2f && href.charCodeAt(i - 1) === 0x2f) doubled = true;
  }
  const path = href.slice(start, end);
  return doubled ? path.replace(/\/{2,}/g, "/") : path;
}

/** The path of a request URL as sent, without parsing it (for an error's family when it does not parse). */
export function rawPath(href: string): string {
  const scheme = href.indexOf("://");
  const start = scheme < 0 ? -1 : href.indexOf("/", scheme + 3);
  if (start < 0) return "/";
  const end = href.slice(start).search(/[?#]/);
  return end < 0 ? href.slice(start) : href.slice(start, start + end);
}
