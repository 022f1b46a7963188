// Assertions for tests (std's @std/assert is JSR-only here): thin names over node:assert.

import nodeAssert from "node:assert/strict";

export function assert(value: unknown, message?: string): asserts value {
  nodeAssert.ok(value, message);
}

export function assertEquals<T>(actual: unknown, expected: T, message?: string): asserts actual is T {
  nodeAssert.deepStrictEqual(actual, expected, message);
}

export function assertNotEquals(actual: unknown, expected: unknown, message?: string): void {
  nodeAssert.notDeepStrictEqual(actual, expected, message);
}

export function assertMatch(actual: string, expected: RegExp, message?: string): void {
  nodeAssert.match(actual, expected, message);
}

export function assertStringIncludes(actual: string, expected: string, message?: string): void {
  nodeAssert.ok(
    actual.includes(expected),
    message ?? `expected ${JSON.stringify(actual)} to include ${JSON.stringify(expected)}`,
  );
}

export async function assertRejects(
  fn: () => Promise<unknown>,
  check?: (err: unknown) => boolean | void,
): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    if (check && check(err) === false) nodeAssert.fail(`unexpected error: ${err}`);
    return err;
  }
  nodeAssert.fail("expected the promise to reject");
}

export function assertThrows(fn: () => unknown, check?: (err: unknown) => boolean | void): unknown {
  try {
    fn();
  } catch (err) {
    if (check && check(err) === false) nodeAssert.fail(`unexpected error: ${err}`);
    return err;
  }
  nodeAssert.fail("expected the function to throw");
}
