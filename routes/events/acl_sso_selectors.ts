// Binding rule selectors parsed once per rule version (ID + ModifyIndex), not at every SSO login
// (docs/events.md#sso-login).

import { type Expr, parseFilter } from "../../lib/bexpr/parse.ts";
import type { StoredBindingRule } from "./acl_sso_model.ts";

/** A rule's selector as a login evaluates it: "all" ("" selects everyone), "none" (it does not parse), or the tree. */
export type ParsedSelector = "all" | "none" | Expr;

export class SelectorCache {
  readonly #parsed = new Map<string, { modifyIndex: number; source: string; selector: ParsedSelector }>();

  /** The rule's parsed selector, parsed now only if this version of the rule was not parsed before. */
  of(rule: StoredBindingRule): ParsedSelector {
    const hit = this.#parsed.get(rule.ID);
    if (hit && hit.modifyIndex === rule.ModifyIndex && hit.source === rule.Selector) return hit.selector;
    let selector: ParsedSelector = "all";
    if (rule.Selector !== "") {
      try {
        selector = parseFilter(rule.Selector);
      } catch {
        selector = "none";
      }
    }
    this.#parsed.set(rule.ID, { modifyIndex: rule.ModifyIndex, source: rule.Selector, selector });
    return selector;
  }

  /** Drops a changed or deleted rule's entry. */
  forget(id: string): void {
    this.#parsed.delete(id);
  }
}
