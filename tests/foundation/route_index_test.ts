// The route index (lib/route_index.ts): segment shapes, whole-segment parameters, which routes a path tries.

import { assertEquals } from "../helpers/assert.ts";
import { laterLiterals, literalsMatch, RouteIndex, segmentShape } from "../../lib/route_index.ts";
import { segmentParams, segmentValues } from "../../lib/route_index.ts";

Deno.test("segmentShape gives literal segments and parameter places, or undefined when the count varies", () => {
  assertEquals(segmentShape("/"), [""]);
  assertEquals(segmentShape("/api/v1/box/:username/:name"), ["api", "v1", "box", undefined, undefined]);
  assertEquals(segmentShape("/v1/auth-methods/:id([^/:]+)\\:authenticate"), [
    "v1",
    "auth-methods",
    undefined,
  ]);
  assertEquals(segmentShape("/vagrant/:name([^/]+)\\.box"), ["vagrant", undefined]);
  assertEquals(segmentShape("/:a-:b/x"), [undefined, "x"]);
  for (
    const varying of [
      "/ui{/*}?",
      "/api/v1{/*}?",
      "/files/*",
      "/:id(.*)",
      "/:id?",
      "/:id+",
      "/a\\/b",
      "/a/:x(\\d+)",
      "/a/:id([^)/]+)/b",
      "/a/:id([^(/]+)",
    ]
  ) {
    assertEquals(segmentShape(varying), undefined, varying);
  }
});

Deno.test("segment parameters: only whole `:name` segments of a fixed shape, sliced from the path, never empty", () => {
  const params = (path: string) => segmentParams(path, segmentShape(path));
  assertEquals(params("/api/v1/box/:username/:name"), [[3, "username"], [4, "name"]]);
  assertEquals(params("/health"), []);
  for (const path of ["/vagrant/:name([^/]+)\\.box", "/:a-:b/x", "/a/:x([^/]+)", "/ui{/*}?", "/a\\:b/:c"]) {
    assertEquals(params(path), undefined, path);
  }
  const index = new RouteIndex([{
    path: "/api/v1/box/:u/:b",
    prefix: "/api/v1/box/",
    order: 0,
    segments: segmentShape("/api/v1/box/:u/:b"),
    literals: [],
  }]);
  const box = params("/api/v1/box/:username/:name")!;
  index.candidates("/api/v1/box/alice/precise%2064");
  assertEquals(segmentValues(box, "/api/v1/box/alice/precise%2064"), {
    username: "alice",
    name: "precise%2064",
  });
  // What the RegExp `[^\/]+?` refuses: an empty segment (a trailing "/" makes one of another count).
  index.candidates("/api/v1/box//precise64");
  assertEquals(segmentValues(box, "/api/v1/box//precise64"), undefined);
});

/** The console's open root routes, then the registry's: as app.ts orders them. */
const table = [
  "/ui/assets/:file",
  "/ui{/*}?",
  "/",
  "/:user",
  "/:user/boxes/:box",
  "/:user/boxes/:box/versions/:version",
  "/api/v1/box/:username/:name",
  "/api/v1/box/:username/:name/version/:version",
  "/api/v1{/*}?",
  "/:username/:name",
  "/:username/:name/version/:version",
].map((path, order) => {
  const segments = segmentShape(path);
  return { path, prefix: /^[^:*(\\{]*/.exec(path)![0], order, segments, literals: laterLiterals(segments) };
});
const index = new RouteIndex(table);

/** The patterns a request would be tried against: candidates whose literal segments are the path's. */
const tried = (path: string) =>
  index.candidates(path).filter((r) => literalsMatch(r.literals, path) && path.startsWith(r.prefix)).map((
    r,
  ) => r.path);

Deno.test("routes whose literal segments differ from the path's are never tried, whatever their place", () => {
  assertEquals(tried("/api/v1/box/alice/precise64"), ["/api/v1/box/:username/:name", "/api/v1{/*}?"]);
  assertEquals(tried("/alice/precise64"), ["/:username/:name"]);
  assertEquals(tried("/alice/boxes/precise64"), ["/:user/boxes/:box"]);
  assertEquals(tried("/alice/precise64/version/1.0.0"), ["/:username/:name/version/:version"]);
  assertEquals(tried("/alice"), ["/:user"]);
  assertEquals(tried("/ui/assets/app.css"), ["/ui/assets/:file", "/ui{/*}?"]);
  assertEquals(tried("/a/b/c/d/e/f/g/h"), []);
});

Deno.test("an open route and a literal route of the same shape stay in table order", () => {
  // "/api/boxes/x" has the shape of the open "/:user/boxes/:box", listed before every "/api/..." route.
  assertEquals(tried("/api/boxes/x"), ["/:user/boxes/:box"]);
  assertEquals(tried("/api/v1/box"), ["/api/v1{/*}?"]);
  const order = new RouteIndex([
    { path: "/:user/:box", prefix: "/", order: 0, segments: [undefined, undefined] },
    { path: "/api/v1", prefix: "/api/v1", order: 1, segments: ["api", "v1"] },
    { path: "/api/:x", prefix: "/api/", order: 2, segments: ["api", undefined] },
  ]);
  assertEquals(order.candidates("/api/v1").map((r) => r.order), [0, 1, 2]);
  assertEquals(order.candidates("/web/v1").map((r) => r.order), [0]);
  assertEquals(order.candidates("/api").map((r) => r.order), []);
});
