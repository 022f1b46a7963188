// Route step: a HEAD request answered by a GET route gets the GET's status and headers without its body.

import type { Handler } from "../../http.ts";

/** The handler for HEAD requests a GET route answers (the router picks it when the route lacks HEAD). */
export function headFromGet(next: Handler): Handler {
  return (ctx) => {
    const answer = next(ctx);
    return answer instanceof Promise ? answer.then(withoutBody) : withoutBody(answer);
  };
}

/** The same response without its body. */
function withoutBody(response: Response): Response {
  if (!response.body) return response;
  response.body.cancel().catch(() => {});
  return new Response(null, { status: response.status, headers: response.headers });
}
