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
