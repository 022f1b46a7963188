// Identifier generators: CSPRNG base62 ids, UUIDs, ULIDs and opaque secrets.

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `length` characters of [0-9A-Za-z] from the CSPRNG, without modulo bias. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const b of bytes) {
      if (b < 248 && out.length < length) out += base62[b % 62];
    }
  }
  return out;
}

/** `prefix_` + 10 base62 characters, the Boundary id format. */
export function prefixedId(prefix: string, length = 10): string {
  return `${prefix}_${randomBase62(length)}`;
}

export function uuid(): string {
  return crypto.randomUUID();
}

export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
let lastUlidTime = 0;
let lastUlidRandom: number[] = [];

/** A ULID: 48-bit millisecond time + 80 random bits, monotonic within one process. */
export function ulid(now = Date.now()): string {
  let random: number[];
  if (now <= lastUlidTime && lastUlidRandom.length === 16) {
    now = lastUlidTime;
    random = [...lastUlidRandom];
    for (let i = 15; i >= 0; i--) {
      if (random[i]! < 31) {
        random[i]!++;
        break;
      }
      random[i] = 0;
    }
  } else {
    random = [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b & 31);
  }
  lastUlidTime = now;
  lastUlidRandom = random;
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = crockford[t % 32] + time;
    t = Math.floor(t / 32);
  }
  return time + random.map((r) => crockford[r]).join("");
}

/** A URL-safe secret with `bytes` bytes of entropy. */
export function randomSecret(bytes = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

export function base64url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}
