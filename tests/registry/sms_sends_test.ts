// The SMS send limits' stored form (routes/registry/core/sms_sends.ts, docs/security.md#throttles): a document
// whose code is gone still reads as an expired code to the previous release's nodes during a rolling upgrade,
// send times ahead of this node's clock count as now, and WHARF_2FA_SMS_INTERVAL stays between 1s and 1h.

import { assert, assertEquals, assertThrows } from "../helpers/assert.ts";
import { hasCode, recentSends, sendWaitMs, withoutCode } from "../../routes/registry/core/sms_sends.ts";
import { loadRegistrySettings } from "../../routes/registry/core/settings.ts";
import type { SmsCodeDoc } from "../../routes/registry/core/model.ts";
import { loadConfig } from "../../lib/config.ts";
import { ConfigError } from "../../lib/errors.ts";

Deno.test("a used-up SMS code's document keeps its send times as an empty, expired code", () => {
  const now = 1_800_000_000_000;
  const inFlight = { sealed: "v1.x.y", expires_at: now + 60_000, failures: 1, sent_at: [now - 5_000] };
  assert(hasCode(inFlight));
  const gone: SmsCodeDoc = withoutCode(inFlight, now)!;
  assertEquals(gone, { sealed: "", expires_at: 0, failures: 0, sent_at: [now - 5_000] });
  assertEquals(hasCode(gone), false);
  // The previous release's check, which reads every SMS document as a code, refuses it before unsealing.
  assert(gone.expires_at! <= now);
  // Sends older than an hour are not kept: then the document goes.
  assertEquals(withoutCode({ ...inFlight, sent_at: [now - 3_600_000] }, now), null);
});

Deno.test("a send time ahead of this node's clock counts as now", () => {
  const now = 1_800_000_000_000;
  const stored = { sent_at: [now + 600_000, "x", Infinity, now - 10_000] } as unknown as SmsCodeDoc;
  const sends = recentSends(stored, now);
  assertEquals(sends, [now - 10_000, now]);
  assertEquals(sendWaitMs(sends, now, 30_000), 30_000);
});

Deno.test("WHARF_2FA_SMS_INTERVAL is refused outside 1s to 1h", () => {
  const settings = (value: string) =>
    loadRegistrySettings(loadConfig(["--data-dir", "/nonexistent"], { WHARF_2FA_SMS_INTERVAL: value }));
  assertEquals(settings("45s").smsIntervalMs, 45_000);
  assertEquals(settings("1h").smsIntervalMs, 3_600_000);
  for (const bad of ["500ms", "2h", "99999999999999999999d"]) {
    assertThrows(
      () => settings(bad),
      (err) =>
        err instanceof ConfigError && err.message === "WHARF_2FA_SMS_INTERVAL must be between 1s and 1h",
    );
  }
});
