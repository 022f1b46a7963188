// A form post's change and the page it returns to: the notice on success, or the registry's refusal (the
// statuses a page shows) as the page's errors.

import { ApiError } from "../../lib/errors.ts";
import { type ConsoleReq, errorMessages } from "./context.ts";
import { seeOther } from "./layout.ts";

/** Runs `write`, then 303 to `href` with `notice`, or with the errors of a refusal whose status is in `shown`. */
export async function writeBack(
  c: ConsoleReq,
  href: string,
  write: () => Promise<unknown>,
  notice: string,
  shown: number[],
): Promise<Response> {
  try {
    await write();
    return seeOther(c, href, notice);
  } catch (err) {
    if (err instanceof ApiError && shown.includes(err.status)) {
      return seeOther(c, href, undefined, {}, errorMessages(err));
    }
    throw err;
  }
}
