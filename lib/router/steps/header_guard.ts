// Response step, on every answer: a header value Deno would refuse (it ends the process) never leaves.

import { ApiError } from "../../errors.ts";
import { refusedResponseHeader } from "../../header_values.ts";
import type { Logger } from "../../log.ts";
import { requestIdOf } from "../../request_id.ts";
import type { FamilyTable } from "../families.ts";

export class HeaderGuard {
  #logger: Logger;
  #families: FamilyTable;

  constructor(logger: Logger, families: FamilyTable) {
    this.#logger = logger;
    this.#families = families;
  }

  /**
   * The response itself, or — when a header value holds a control character (docs/security.md "Response
   * headers") — a 500 in the shape of the family owning `path` in place of it, its body dropped and the refusal
   * logged.
   */
  check(response: Response, path: string, sequence: number): Response {
    const header = refusedResponseHeader(response);
    if (header === undefined) return response;
    response.body?.cancel().catch(() => {});
    const requestId = requestIdOf(sequence);
    this.#logger.error("response refused: a header value holds a control character", {
      request_id: requestId,
      header,
      status: response.status,
    });
    const error = new ApiError(500, `Internal error (request ${requestId})`);
    return this.#families.render(this.#families.ownerOf(path), error, requestId);
  }
}
