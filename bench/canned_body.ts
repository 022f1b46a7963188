// A canned response body for the registry read baselines, in the form Deno serves fastest.

/**
 * The body as a string when it is UTF-8 text (Deno 2.9.6 serves a string body faster than the same bytes as a
 * Uint8Array, which it copies per response), else the bytes: the stronger baseline either way.
 */
export function cannedBody(base64: string): string | Uint8Array<ArrayBuffer> {
  const bytes = Uint8Array.from(atob(base64), (ch) => ch.charCodeAt(0));
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return bytes;
  }
}
