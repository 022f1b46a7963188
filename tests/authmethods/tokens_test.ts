// Token minting: the base58 encoding (checked against its BigInt definition) and the token format.

import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { base58, mintToken } from "../../routes/authmethods/tokens.ts";

const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** base58 by its definition: the bytes as one big-endian number, one "1" per leading zero byte. */
function referenceBase58(bytes: Uint8Array): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = "";
  for (; n > 0n; n /= 58n) out = alphabet[Number(n % 58n)] + out;
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  return "1".repeat(zeros) + out;
}

Deno.test("base58 matches its BigInt definition when bytes are random, zero-led, all zero or all 0xff", () => {
  const cases: Uint8Array[] = [new Uint8Array(0), Uint8Array.of(0), Uint8Array.of(57), Uint8Array.of(58)];
  for (let i = 0; i < 5000; i++) {
    const bytes = crypto.getRandomValues(new Uint8Array(i % 67));
    if (i % 5 === 1) bytes.fill(0, 0, Math.min(bytes.length, 1 + (i % 4)));
    if (i % 17 === 2) bytes.fill(0);
    if (i % 19 === 3) bytes.fill(255);
    cases.push(bytes);
  }
  for (const bytes of cases) assertEquals(base58(bytes), referenceBase58(bytes), `bytes ${bytes.join(",")}`);
});

Deno.test("mintToken issues at_<id>_s1<base58 of 32 random bytes> tokens whose hash is stored", () => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const t = mintToken({ ttlMs: 60_000, staleMs: 60_000 }, {
      userId: "u_1234567890",
      accountId: "acctldap_1234567890",
      methodId: "amldap_1234567890",
      scopeId: "global",
    });
    assertMatch(t.token, /^at_[0-9A-Za-z]{10}_s1[1-9A-HJ-NP-Za-km-z]{30,50}$/);
    assert(t.token.startsWith(`${t.id}_s1`));
    assert(
      !JSON.stringify(t.doc).includes(t.token.slice(t.id.length + 3)),
      "the secret is not in the document",
    );
    seen.add(t.token);
  }
  assertEquals(seen.size, 200);
});
