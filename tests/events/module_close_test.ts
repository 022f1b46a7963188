// Closing the events module removes every store.watch subscription it made (nodes, jobs, ACL).

import { createEventsApi } from "../../routes/events/mod.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { withAppContext } from "../helpers/app_context.ts";

Deno.test("events module close removes its store watchers", () =>
  withAppContext({}, async (app) => {
    const before = app.data.store.watcherCount;
    const api = await createEventsApi(app);
    assert(app.data.store.watcherCount >= before + 2, "the nodes and jobs indexes watch their collections");
    api.close?.();
    assertEquals(app.data.store.watcherCount, before);
  }));
