// The index person → registry user (docs/identity.md#provisioning): which registry user an auth-method user is
// linked to, kept by the store's change feed, so a sign-in looks it up instead of scanning every user.

import type { DocChange, DocumentStore, StoredDoc } from "../../../lib/store/mod.ts";
import { type UserDoc, USERS } from "./model.ts";

/**
 * auth-method user id → registry user key, for every user with `identity.user_id`. Built from the stored users
 * and kept by the store's watch, which every commit calls, this node's and (on a cluster) the other nodes'
 * alike: a link, an unlink, a provisioned or deleted user, a user written under another key.
 */
export class LinkedUsers {
  readonly #byPerson = new Map<string, string>();
  readonly #store: DocumentStore;
  readonly #unwatch: () => void;

  constructor(store: DocumentStore) {
    this.#store = store;
    for (const u of store.list<UserDoc>(USERS)) this.#add(u);
    this.#unwatch = store.watch(USERS, (change) => this.#apply(change));
  }

  close(): void {
    this.#unwatch();
  }

  /** The registry user linked to the auth-method user `personId`. */
  of(personId: string): StoredDoc<UserDoc> | undefined {
    const key = this.#byPerson.get(personId);
    const user = key === undefined ? undefined : this.#store.get<UserDoc>(USERS, key);
    return user?.doc.identity?.user_id === personId ? user : undefined;
  }

  #apply(change: DocChange): void {
    const before = (change.previous?.doc as UserDoc | undefined)?.identity?.user_id;
    const after = (change.current?.doc as UserDoc | undefined)?.identity?.user_id;
    if (before && before !== after && this.#byPerson.get(before) === change.id) this.#byPerson.delete(before);
    if (change.current) this.#add(change.current as StoredDoc<UserDoc>);
  }

  #add(user: StoredDoc<UserDoc>): void {
    const person = user.doc.identity?.user_id;
    if (person) this.#byPerson.set(person, user.id);
  }
}
