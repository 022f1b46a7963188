// Decodes the policy item tree into plain objects the way Nomad's `hcl.Decode` fills its Go structs: fields
// are found by (case-insensitive) key, labels become the `key` field, repeated attributes overwrite (strings)
// or append (lists), a labelled block with one label too many is unfolded one level, and the keys the root
// struct does not use are collected for Nomad's "Invalid or duplicate policy keys" check. The structs are
// described by a small schema, so the decoder itself knows nothing about policies.

import {
  children,
  elems,
  equalFold,
  filterList,
  goNodeType,
  type Node,
  nodePos,
  noPos,
  type ObjectItem,
  type ObjectList,
  PosError,
  tokenString,
} from "./policy_ast.ts";

export type GoType =
  | { kind: "string" }
  | { kind: "slice"; elem: GoType }
  | { kind: "ptr"; elem: GoType }
  | { kind: "struct"; fields: readonly GoField[] };

/** A struct field: its Go name, its `hcl:"…"` tag and its type. */
export interface GoField {
  name: string;
  tag: string;
  type: GoType;
}

export type GoStruct = Record<string, unknown>;

/** The zero value: "" for strings, null for slices and pointers, a struct of zero fields. */
export function zeroValue(type: GoType): unknown {
  switch (type.kind) {
    case "string":
      return "";
    case "slice":
    case "ptr":
      return null;
    case "struct":
      return Object.fromEntries(type.fields.map((f) => [f.name, zeroValue(f.type)]));
  }
}

interface Cell {
  get(): unknown;
  set(v: unknown): void;
}

function fieldCell(obj: GoStruct, name: string): Cell {
  return { get: () => obj[name], set: (v) => (obj[name] = v) };
}

/** Decodes `root` into a new value of struct type `type` (Nomad's `hcl.Decode(&p, rules)`). */
export function decodeRoot(root: ObjectList, type: GoType): GoStruct {
  if (type.kind !== "struct") throw new Error("decodeRoot needs a struct type");
  const out = zeroValue(type) as GoStruct;
  decodeStruct("root", root, out, type);
  return out;
}

function decode(name: string, node: Node, cell: Cell, type: GoType): void {
  switch (type.kind) {
    case "string":
      return decodeString(name, node, cell);
    case "slice":
      return decodeSlice(name, node, cell, type.elem);
    case "ptr":
      return decodePtr(name, node, cell, type.elem);
    case "struct":
      return decodeStruct(name, node, cell.get() as GoStruct, type);
  }
}

function decodeString(name: string, node: Node, cell: Cell): void {
  if (node.kind === "literal") {
    const t = node.token;
    if (t.type === "NUMBER" || t.type === "FLOAT" || t.type === "BOOL") return cell.set(t.text);
    if (t.type === "STRING" || t.type === "HEREDOC") return cell.set(tokenString(t));
  }
  throw new PosError(nodePos(node), `${name}: unknown type for string ${goNodeType(node)}`);
}

function decodePtr(name: string, node: Node, cell: Cell, elem: GoType): void {
  const existing = cell.get();
  if (existing !== null && existing !== undefined) {
    return decode(name, node, { get: () => existing, set: () => {} }, elem);
  }
  let value = zeroValue(elem);
  decode(name, node, { get: () => value, set: (v) => (value = v) }, elem);
  cell.set(value);
}

function decodeSlice(name: string, node: Node, cell: Cell, elem: GoType): void {
  const result = [...((cell.get() as unknown[] | null) ?? [])];
  let items: Node[];
  if (node.kind === "list") items = node.items;
  else if (node.kind === "object") items = [node];
  else if (node.kind === "listtype") items = node.list;
  else throw new PosError(nodePos(node), `unknown slice type: ${goNodeType(node)}`);
  items.forEach((item, i) => {
    let value = zeroValue(elem);
    decode(`${name}[${i}]`, unfold(item, elem), { get: () => value, set: (v) => (value = v) }, elem);
    result.push(value);
  });
  cell.set(result);
}

/**
 * HCL's `expandObject`: an item with exactly two keys decoded into a struct becomes an item with the first
 * key whose body holds the item with the second (`namespace "a" "b" { … }` → name `a`, body `b { … }`).
 */
function unfold(node: Node, elem: GoType): Node {
  if (node.kind !== "item") return node;
  const isStruct = elem.kind === "struct" || (elem.kind === "ptr" && elem.elem.kind === "struct");
  if (!isStruct || node.keys.length !== 2) return node;
  const first = node.keys[0]!;
  node.keys = node.keys.slice(1);
  return {
    kind: "item",
    keys: [first],
    val: { kind: "object", pos: noPos, list: { kind: "list", items: [node] } },
  };
}

function removeFold(keys: string[], key: string): string[] {
  const at = keys.findIndex((k) => equalFold(k, key));
  return at < 0 ? keys : [...keys.slice(0, at), ...keys.slice(at + 1)];
}

/** A UTF-16 code unit mapped so that comparing mapped units orders strings by code point (= UTF-8 bytes). */
function orderUnit(u: number): number {
  if (u < 0xd800) return u;
  return u <= 0xdfff ? u + 0x2000 : u - 0x800;
}

/** Bytewise (UTF-8) order, as Go's sort.Strings. */
export function compareBytes(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return orderUnit(x) - orderUnit(y);
  }
  return a.length - b.length;
}

function decodeStruct(name: string, node: Node, out: GoStruct, type: GoType & { kind: "struct" }): void {
  let item: ObjectItem | undefined;
  if (node.kind === "item") {
    item = node;
    node = node.val;
  }
  if (node.kind === "object") node = node.list;
  if (node.kind === "literal" && item) node = { kind: "list", items: [item] };
  if (node.kind !== "list") {
    throw new PosError(nodePos(node), `${name}: not an object type for struct (${goNodeType(node)})`);
  }
  const list = node;
  let unused: string[] = [];
  for (const it of list.items) for (const k of it.keys) unused.push(tokenString(k));
  const unusedFields: string[] = [];
  for (const field of type.fields) {
    const [tagName, option] = splitTag(field.tag);
    if (tagName === "-") continue;
    if (option === "key") {
      if (!item) throw new PosError(nodePos(list), `${name}: ${field.name} asked for 'key', impossible`);
      out[field.name] = item.keys.length > 0 ? tokenString(item.keys[0]!) : "";
      continue;
    }
    if (option === "unusedKeys") {
      unusedFields.push(field.name);
      continue;
    }
    const key = tagName || field.name;
    const filtered = filterList(list, key);
    const prefixed = children(filtered);
    const matches = elems(filtered);
    if (prefixed.items.length === 0 && matches.items.length === 0) continue;
    unused = removeFold(unused, key);
    const fieldName = `${name}.${key}`;
    const cell = fieldCell(out, field.name);
    if (prefixed.items.length > 0) decode(fieldName, prefixed, cell, field.type);
    for (const match of matches.items) {
      const v = match.val;
      decode(fieldName, v.kind === "object" ? { kind: "list", items: v.list.items } : v, cell, field.type);
    }
  }
  if (unused.length > 0) {
    unused.sort(compareBytes);
    for (const f of unusedFields) out[f] = [...unused];
  }
}

function splitTag(tag: string): [string, string | undefined] {
  const at = tag.indexOf(",");
  return at < 0 ? [tag, undefined] : [tag.slice(0, at), tag.slice(at + 1)];
}
