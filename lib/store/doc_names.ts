// Collection names and the file names document ids map to (no client string ever becomes a path).

export const collectionPattern = /^(registry|auth|cluster|test)\/[a-z][a-z0-9_-]{0,63}$/;
const plainId = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,149}$/;
const encoder = new TextEncoder();

/** Maps any id to a safe file name: plain ids as-is, anything else as `~` + hex of its UTF-8. */
export function fileNameForId(id: string): string {
  if (id.length === 0) throw new RangeError("a document id must not be empty");
  if (plainId.test(id) && !id.includes("..") && !id.endsWith(".tmp")) return `${id}.json`;
  const bytes = encoder.encode(id);
  if (bytes.length > 110) throw new RangeError("a document id must be at most 110 bytes when not plain");
  return `~${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}.json`;
}

export function idForFileName(name: string): string | undefined {
  if (!name.endsWith(".json")) return undefined;
  const stem = name.slice(0, -5);
  if (!stem.startsWith("~")) return stem;
  const hex = stem.slice(1);
  if (!/^([0-9a-f]{2})+$/.test(hex)) return undefined;
  return new TextDecoder().decode(new Uint8Array(hex.match(/../g)!.map((h) => parseInt(h, 16))));
}

export function assertCollection(name: string): void {
  if (!collectionPattern.test(name)) throw new RangeError(`invalid collection name ${JSON.stringify(name)}`);
}
