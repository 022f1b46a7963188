// The highest commit index seen per collection: the X-Nomad-Index a table's reads answer with (AclState for
// tokens, policies and roles; SsoState for auth methods and binding rules).

export class TableIndexes {
  readonly #max = new Map<string, number>();

  /** Raises `collection`'s index to `index` if it is higher. */
  bump(collection: string, index: number): void {
    if (index > (this.#max.get(collection) ?? 0)) this.#max.set(collection, index);
  }

  /** The highest index seen for `collection` (0 before any). */
  of(collection: string): number {
    return this.#max.get(collection) ?? 0;
  }
}
