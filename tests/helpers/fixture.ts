// Fixture lifetimes shared by the suites: start something (a server, a fixture around one), run a test with it,
// and always stop it.

/** Anything a test starts and must stop: TestServer, the family fixtures. */
export interface Stoppable {
  stop(): Promise<unknown>;
}

/** Runs `fn` with what `start` gives and stops it afterwards, whether `fn` passed or threw. */
export async function withStarted<F extends Stoppable>(
  start: () => Promise<F>,
  fn: (fixture: F) => Promise<void>,
): Promise<void> {
  const fixture = await start();
  try {
    await fn(fixture);
  } finally {
    await fixture.stop();
  }
}

/** A `Deno.test` registrar whose tests each run with a fresh fixture from `start`. */
export function testWith<F extends Stoppable>(
  start: () => Promise<F>,
): (name: string, fn: (fixture: F) => Promise<void>) => void {
  return (name, fn) => Deno.test(name, () => withStarted(start, fn));
}

/** A test registrar whose second argument, settings for the fixture, may be left out. */
export interface TestWithSettings<F, S> {
  (name: string, fn: (fixture: F) => Promise<void>): void;
  (name: string, settings: S, fn: (fixture: F) => Promise<void>): void;
}

/** Like `testWith`, for fixtures started with settings: `test(name, fn)` or `test(name, settings, fn)`. */
export function testWithSettings<F extends Stoppable, S extends object>(
  start: (settings?: S) => Promise<F>,
): TestWithSettings<F, S> {
  return (
    name: string,
    settingsOrFn: S | ((fixture: F) => Promise<void>),
    fn?: (fixture: F) => Promise<void>,
  ) => {
    const [settings, body] = typeof settingsOrFn === "function"
      ? [undefined, settingsOrFn as (fixture: F) => Promise<void>]
      : [settingsOrFn, fn!];
    Deno.test(name, () => withStarted(() => start(settings), body));
  };
}
