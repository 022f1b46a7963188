// Request step: a Host header that no URL can hold is answered 400 before any route is looked up.

import { ApiError } from "../../errors.ts";
import { validHost } from "../../http.ts";

/**
 * A Host header that no URL can hold (`x:99999`, `a b`, `%`) is answered 400, as HTTP requires, before any
 * handler builds a URL from it. Deno puts the Host into the request URL; the last valid one is remembered, so a
 * request naming it again costs one comparison.
 */
export class HostCheck {
  /** The Host of the last request whose Host was valid: most requests name the same one. */
  #validHost = "";

  /** Throws the 400 for a request URL (`href`) whose Host is malformed. */
  check(href: string): void {
    const from = href.indexOf("://") + 3;
    const last = this.#validHost;
    const after = from + last.length;
    if (
      last !== "" && href.startsWith(last, from) && (after === href.length || href.charCodeAt(after) === 0x2f)
    ) {
      return;
    }
    const end = href.indexOf("/", from);
    const host = href.slice(from, end < 0 ? href.length : end);
    if (!validHost(host)) throw new ApiError(400, "Malformed Host header");
    this.#validHost = host;
  }
}
