// Child process for the store benchmark: opens a data dir, prints start-up time and RSS as JSON.

import { DataDir } from "../lib/store/mod.ts";
import { rssMiB } from "./lib.ts";

const started = performance.now();
const data = await DataDir.open(Deno.args[0]!, { checkpointMs: 60_000 });
const ms = performance.now() - started;
let count = 0;
for (const _ of data.store.list("test/items")) count++;
console.log(JSON.stringify({ ms, rssMiB: rssMiB(Deno.pid), count }));
await data.close();
