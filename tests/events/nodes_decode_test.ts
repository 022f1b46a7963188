// Unit tests of the Go-like struct decoder behind node bodies, and of ComputedClass.

import { assert, assertEquals, assertThrows } from "../helpers/assert.ts";
import { ApiError } from "../../lib/errors.ts";
import { decodeShape, decodeStruct, type Field } from "../../routes/events/nodes_decode.ts";
import { computedClass, type NodeDoc } from "../../routes/events/nodes_model.ts";

const fields: readonly Field[] = [
  ["Name", "string", "dflt"],
  ["Count", "int", 0],
  ["Inner", { struct: "Inner", fields: [["On", "bool", false], ["Tags", "stringMap", null]] }, null],
  ["Items", { list: "string", goType: "[]string" }, null],
];

function decodeError(fn: () => unknown): string {
  const err = assertThrows(fn);
  assert(err instanceof ApiError && err.status === 400, String(err));
  return err.message;
}

Deno.test("decodeStruct fills defaults in declared order, drops unknown keys and matches keys case-insensitively", () => {
  const out = decodeStruct(fields, { count: 3, Extra: true, inner: { on: true } }, "T");
  assertEquals(Object.keys(out), ["Name", "Count", "Inner", "Items"]);
  assertEquals(out, { Name: "dflt", Count: 3, Inner: { On: true, Tags: null }, Items: null });
  assertEquals(decodeStruct(fields, { Name: null }, "T").Name, "dflt");
});

Deno.test("decodeStruct reports wrong types in Go's words", () => {
  assertEquals(
    decodeError(() => decodeStruct(fields, { Count: "3" }, "T")),
    "Failed to decode request body: json: cannot unmarshal string into Go struct field T.Count of type int64",
  );
  assertEquals(
    decodeError(() => decodeStruct(fields, { Inner: [] }, "T")),
    "Failed to decode request body: json: cannot unmarshal array into Go struct field T.Inner of type structs.Inner",
  );
  assertEquals(
    decodeError(() => decodeStruct(fields, { Items: [1] }, "T")),
    "Failed to decode request body: json: cannot unmarshal number 1 into Go struct field T.Items of type string",
  );
  decodeError(() => decodeStruct(fields, { Count: 2 ** 70 }, "T"));
  assertEquals(decodeStruct(fields, { Count: 2 ** 60 }, "T").Count, 2 ** 60);
});

Deno.test("decoded maps keep a __proto__ key as plain data", () => {
  const parsed = JSON.parse(`{"__proto__": {"x": "1"}, "a": {"x": "2"}}`);
  const out = decodeShape({ mapOf: "stringMap", goType: "map" }, parsed, "M") as Record<string, unknown>;
  assertEquals(Object.keys(out), ["__proto__", "a"]);
  assertEquals(Object.getPrototypeOf(out), Object.prototype);
});

Deno.test("computedClass depends on class-relevant fields only", () => {
  const base = {
    Datacenter: "dc1",
    NodeClass: "",
    NodePool: "default",
    Attributes: { "kernel.name": "linux", "unique.hostname": "a" },
    Meta: {},
  } as unknown as NodeDoc;
  const same = { ...base, Attributes: { "unique.hostname": "b", "kernel.name": "linux" } } as NodeDoc;
  assertEquals(computedClass(base), computedClass(same));
  assert(computedClass(base) !== computedClass({ ...base, Datacenter: "dc2" } as NodeDoc));
  assert(computedClass(base) !== computedClass({ ...base, Meta: { rack: "r1" } } as NodeDoc));
  assert(/^v1:\d+$/.test(computedClass(base)));
});
