// Reads of the stored auth methods and binding rules, and the table indexes their reads answer with.

import type { AppContext } from "../../lib/app.ts";
import { ApiError } from "../../lib/errors.ts";
import type { EventInput } from "../../lib/store/mod.ts";
import {
  authMethodCollection,
  bindingRuleCollection,
  clientSecretSealPurpose,
  type StoredAuthMethod,
  type StoredBindingRule,
} from "./acl_sso_model.ts";
import { SelectorCache } from "./acl_sso_selectors.ts";
import { TableIndexes } from "./table_indexes.ts";

/** One lock for every auth method and binding rule write: the "one default method" rule spans methods. */
export const ssoLock = "cluster/acl_sso";

export class SsoState {
  readonly #ctx: AppContext;
  readonly #tables = new TableIndexes();
  readonly #unwatch: Array<() => void> = [];
  readonly #onAuthMethodDeleted = new Set<(name: string) => void>();
  /** The binding rules' parsed selectors, each dropped by the watch below when its rule changes or goes. */
  readonly selectors = new SelectorCache();

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
    const { store } = ctx.data;
    for (const collection of [authMethodCollection, bindingRuleCollection]) {
      for (const d of store.list<{ ModifyIndex: number }>(collection)) {
        this.#tables.bump(collection, d.doc.ModifyIndex);
      }
      this.#unwatch.push(store.watch(collection, (c) => {
        this.#tables.bump(collection, c.index);
        if (collection === bindingRuleCollection) this.selectors.forget(c.id);
        if (collection === authMethodCollection && !c.current) {
          for (const listener of this.#onAuthMethodDeleted) listener(c.id);
        }
      }));
    }
  }

  close(): void {
    for (const u of this.#unwatch) u();
    this.#onAuthMethodDeleted.clear();
  }

  /** Calls `listener` with the name of each auth method deleted (on this node or, replicated, on another). */
  onAuthMethodDeleted(listener: (name: string) => void): void {
    this.#onAuthMethodDeleted.add(listener);
  }

  /** Highest commit Index seen for auth methods or binding rules (X-Nomad-Index of reads). */
  tableIndex(collection: string): number {
    return this.#tables.of(collection);
  }

  authMethod(name: string): StoredAuthMethod | undefined {
    return this.#ctx.data.store.get<StoredAuthMethod>(authMethodCollection, name)?.doc;
  }

  authMethods(): StoredAuthMethod[] {
    return [...this.#ctx.data.store.list<StoredAuthMethod>(authMethodCollection)].map((d) => d.doc)
      .sort((a, b) => (a.Name < b.Name ? -1 : a.Name > b.Name ? 1 : 0));
  }

  bindingRule(id: string): StoredBindingRule | undefined {
    return this.#ctx.data.store.get<StoredBindingRule>(bindingRuleCollection, id)?.doc;
  }

  /** Every rule, by ID; or only `authMethod`'s, in creation order (the order a login evaluates them). */
  bindingRules(authMethod?: string): StoredBindingRule[] {
    const all = [...this.#ctx.data.store.list<StoredBindingRule>(bindingRuleCollection)].map((d) => d.doc);
    if (authMethod === undefined) return all.sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0));
    return all.filter((r) => r.AuthMethod === authMethod).sort((a, b) => a.CreateIndex - b.CreateIndex);
  }

  /** Deletes an auth method or a binding rule with its event; 400 `notFound` when it is not there. */
  async remove<T>(
    collection: string,
    id: string,
    notFound: string,
    deleted: (doc: T) => EventInput,
  ): Promise<number> {
    const { store } = this.#ctx.data;
    const { index } = await store.transact([ssoLock], () => {
      const current = store.get<T>(collection, id)?.doc;
      if (!current) throw new ApiError(400, notFound);
      return { writes: [{ collection, id, doc: null }], events: [deleted(current)] };
    });
    return index;
  }

  /** The plaintext OIDC client secret of a method ("" when none). */
  clientSecret(m: StoredAuthMethod): string {
    const sealed = m.Config.OIDCClientSecretSealed;
    return sealed ? this.#ctx.data.keys.open(clientSecretSealPurpose, sealed, m.Name) : "";
  }
}
