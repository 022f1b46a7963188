// The root key and what is derived from it: HMACs of secrets, AES-GCM sealing, constant-time comparison.

import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hkdfSync,
  timingSafeEqual,
} from "node:crypto";
import { Buffer } from "node:buffer";
import { ConfigError } from "./errors.ts";

/** Holds the 32-byte root key and derives one key per purpose with HKDF-SHA256. */
export class Keyring {
  readonly #root: Uint8Array;
  readonly #derived = new Map<string, Buffer>();

  constructor(root: Uint8Array) {
    if (root.length !== 32) throw new ConfigError("the root key must be 32 bytes");
    this.#root = root;
  }

  /** A 32-byte key for `purpose` (e.g. "registry.token-hmac"). */
  key(purpose: string): Buffer {
    let k = this.#derived.get(purpose);
    if (!k) {
      k = Buffer.from(hkdfSync("sha256", this.#root, "wharf", purpose, 32));
      this.#derived.set(purpose, k);
    }
    return k;
  }

  /** Hex HMAC-SHA256 of `value` under the purpose key: how secrets are stored and looked up. */
  hmac(purpose: string, value: string): string {
    return createHmac("sha256", this.key(purpose)).update(value).digest("hex");
  }

  /** AES-256-GCM with a random nonce; `aad` binds the ciphertext to its record and field. */
  seal(purpose: string, plaintext: string, aad: string): string {
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const cipher = createCipheriv("aes-256-gcm", this.key(purpose), iv);
    cipher.setAAD(Buffer.from(aad));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return [
      "v1",
      Buffer.from(iv).toString("base64"),
      body.toString("base64"),
      cipher.getAuthTag().toString("base64"),
    ]
      .join(".");
  }

  /** Reverses seal; throws when the value was tampered with or sealed for another record. */
  open(purpose: string, sealed: string, aad: string): string {
    const [v, iv, body, tag] = sealed.split(".");
    if (v !== "v1" || !iv || body === undefined || !tag) throw new Error("malformed sealed value");
    const decipher = createDecipheriv("aes-256-gcm", this.key(purpose), Buffer.from(iv, "base64"));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(Buffer.from(tag, "base64"));
    return Buffer.concat([decipher.update(Buffer.from(body, "base64")), decipher.final()]).toString("utf8");
  }
}

/** Compares two strings in time that depends only on their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  const ab = createHash("sha256").update(a).digest();
  const bb = createHash("sha256").update(b).digest();
  return timingSafeEqual(ab, bb) && a.length === b.length;
}

export function sha256Hex(value: string | Uint8Array): string {
  return createHash("sha256").update(value).digest("hex");
}

/** Reads WHARF_ROOT_KEY (base64, 32 bytes) or the data dir's root.key, creating it (0600) on first start. */
export async function loadRootKey(envValue: string | undefined, keyFile: string): Promise<Uint8Array> {
  if (envValue) {
    const bytes = Buffer.from(envValue, "base64");
    if (bytes.length !== 32) throw new ConfigError("WHARF_ROOT_KEY must be 32 bytes, base64-encoded");
    return new Uint8Array(bytes);
  }
  try {
    const text = (await Deno.readTextFile(keyFile)).trim();
    const bytes = Buffer.from(text, "base64");
    if (bytes.length !== 32) throw new ConfigError(`${keyFile} does not hold a 32-byte base64 key`);
    return new Uint8Array(bytes);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const fresh = crypto.getRandomValues(new Uint8Array(32));
  const tmp = `${keyFile}.tmp`;
  const file = await Deno.open(tmp, { write: true, create: true, truncate: true, mode: 0o600 });
  try {
    await file.write(new TextEncoder().encode(Buffer.from(fresh).toString("base64") + "\n"));
    await file.sync();
  } finally {
    file.close();
  }
  await Deno.rename(tmp, keyFile);
  return fresh;
}
