// SecretPathRedactor: secret segments are found by the path's shape, and nothing else is touched.

import { assertEquals } from "../helpers/assert.ts";
import { SecretPathRedactor } from "../../lib/secret_paths.ts";

const redactor = new SecretPathRedactor([
  { path: "/api/v1/uploads/:id", secretParams: ["id"] },
  { path: "/api/v1/box/:u/:n/version/:v/provider/:p/upload/direct/:id", secretParams: ["id"] },
  { path: "/api/v1/box/:u/:n" },
  // The registry serves both upload URL forms under /api/v2 too, its callback with the architecture.
  { path: "/api/v2/uploads/:id", secretParams: ["id"] },
  { path: "/api/v2/box/:u/:n/version/:v/provider/:p/:a/upload/direct/:id", secretParams: ["id"] },
]);

Deno.test("secret path segments are redacted in every spelling of their route's shape", () => {
  const cases: [string, string][] = [
    ["/api/v1/uploads/abc", "/api/v1/uploads/***"],
    ["/api/v1/uploads/abc/", "/api/v1/uploads/***/"],
    ["/api/v1/uploads/abc/more/x", "/api/v1/uploads/***/***/***"],
    ["//api//v1/uploads//abc", "//api//v1/uploads//***"],
    ["/API/V1/Uploads/abc", "/API/V1/Uploads/***"],
    ["/api/v1/%75ploads/a%62c", "/api/v1/%75ploads/***"],
    ["/api/v1/uploads/%zz%E0", "/api/v1/uploads/***"],
    [
      "/api/v1/box/a/b/version/1/provider/vb/upload/direct/abc",
      "/api/v1/box/a/b/version/1/provider/vb/upload/direct/***",
    ],
    [
      "/api/v1/box/a/b/version/1/provider/vb/UPLOAD/%64irect/abc/",
      "/api/v1/box/a/b/version/1/provider/vb/UPLOAD/%64irect/***/",
    ],
    ["/api/v2/uploads/abc", "/api/v2/uploads/***"],
    ["//API/v2/uploads/abc/", "//API/v2/uploads/***/"],
    [
      "/api/v2/box/a/b/version/1/provider/vb/arm64/upload/direct/abc",
      "/api/v2/box/a/b/version/1/provider/vb/arm64/upload/direct/***",
    ],
  ];
  for (const [path, logged] of cases) assertEquals(redactor.redact(path), logged, path);
});

Deno.test("paths of other shapes are logged as they are, names like 'uploads' included", () => {
  for (
    const path of [
      "/health",
      "/api/v1/uploads",
      "/api/v1/uploads/",
      "/api/v1/box/alice/uploads",
      "/api/v1/box/alice/uploads/version/1.0.0",
      "/api/v3/uploads/abc",
      "/api/v2/uploads",
      "/api/v2/box/a/b/version/1/provider/vb/arm64/upload",
      "/alice/uploads/direct/x",
      "/api/v1/box/a/b/version/1/provider/vb/upload",
    ]
  ) assertEquals(redactor.redact(path), path);
});
