// SMS delivery of two-factor codes: a development outbox (<data-dir>/outbox/sms.ndjson) or a webhook.

import type { Logger } from "../../../lib/log.ts";

export interface SmsMessage {
  to: string;
  code: string;
  created_at: string;
}

export interface SmsSender {
  send(message: SmsMessage): Promise<void>;
}

export function maskedNumber(to: string): string {
  return "*".repeat(Math.max(0, to.length - 4)) + to.slice(-4);
}

/** Appends one JSON line per code to the outbox file (mode 0600). */
export function outboxSender(dataDir: string, logger: Logger): SmsSender {
  const dir = `${dataDir}/outbox`;
  return {
    async send(message) {
      await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
      const file = await Deno.open(`${dir}/sms.ndjson`, { append: true, create: true, mode: 0o600 });
      try {
        await file.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
      } finally {
        file.close();
      }
      logger.info(`sms: code sent to ${maskedNumber(message.to)}`);
    },
  };
}

/** POSTs the message as JSON; 2xx means sent, anything else (or 10 s without answer) is a failure. */
export function webhookSender(url: string, bearer: string | undefined, logger: Logger): SmsSender {
  return {
    async send(message) {
      const headers: Record<string, string> = { "Content-Type": "application/json" };
      if (bearer) headers.Authorization = `Bearer ${bearer}`;
      const response = await fetch(url, {
        method: "POST",
        headers,
        body: JSON.stringify(message),
        signal: AbortSignal.timeout(10_000),
      });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`sms webhook answered ${response.status}`);
      logger.info(`sms: code sent to ${maskedNumber(message.to)}`);
    },
  };
}
