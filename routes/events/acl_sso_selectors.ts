// Binding rule selectors parsed once per rule version, not at every SSO login (docs/events.md#sso-login):
// SsoState drops a rule's entry whenever its document changes or goes, so the next login parses it anew.

import { type Expr, parseFilter } from "../../lib/bexpr/parse.ts";
import type { StoredBindingRule } from "./acl_sso_model.ts";

/** A rule's selector as a login evaluates it: "all" ("" selects everyone), "none" (it does not parse), or the tree. */
export type ParsedSelector = "all" | "none" | Expr;

export class SelectorCache {
  readonly #parsed = new Map<string, ParsedSelector>();

  /**
   * The parsed selector of `rule` (the stored document, read in the same synchronous step), parsed now only if
   * it was not parsed since the rule last changed.
   */
  of(rule: StoredBindingRule): ParsedSelector {
    const hit = this.#parsed.get(rule.ID);
    if (hit !== undefined) return hit;
    let selector: ParsedSelector = "all";
    if (rule.Selector !== "") {
      try {
        selector = parseFilter(rule.Selector);
      } catch {
        selector = "none";
      }
    }
    this.#parsed.set(rule.ID, selector);
    return selector;
  }

  /** Drops a changed or deleted rule's entry (SsoState's watch of the rules, on every node, at each commit). */
  forget(id: string): void {
    this.#parsed.delete(id);
  }
}
