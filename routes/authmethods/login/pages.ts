// The small HTML pages a browser lands on after an OIDC login (docs/auth-methods.md#oidc), so it never sees a
// bare 404.

function page(title: string, body: string, status = 200): Response {
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head>` +
    `<body><h1>${title}</h1><p>${body}</p></body></html>`;
  return new Response(html, {
    status,
    headers: { "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": "default-src 'none'" },
  });
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function completionPage(): Response {
  return page("Signed in", "You are signed in; return to your application.");
}

/** Shows the error's message (from the JSON in ?error=), HTML-escaped. */
export function errorPage(url: URL): Response {
  const raw = url.searchParams.get("error") ?? "";
  let message = raw;
  try {
    const parsed = JSON.parse(raw);
    if (parsed && typeof parsed.message === "string") message = parsed.message;
  } catch {
    // Not JSON: show the raw text.
  }
  return page("Authentication failed", escapeHtml(message || "Authentication failed."));
}
