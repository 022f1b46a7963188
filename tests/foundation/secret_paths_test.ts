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

Deno.test("a shape hidden by an encoded slash or a doubly encoded name is found once the path is decoded", () => {
  const id = "AbC123xyz";
  const cases: [string, string][] = [
    [`/api/v1/uploads%2F${id}`, "/api/v1/uploads/***"],
    [`/api/v1/uploads%2f${id}`, "/api/v1/uploads/***"],
    [`/api/v1/%2575ploads/${id}`, "/api/v1/uploads/***"],
    [`/api/v1/%252575ploads/${id}`, "/api/v1/uploads/***"],
    [`/api/v1/uploads%2f..%2fuploads/${id}`, "/api/v1/uploads/***/***/***"],
    [`/api%2Fv1%2Fuploads%2F${id}`, "/api/v1/uploads/***"],
  ];
  for (const [path, logged] of cases) assertEquals(redactor.redact(path), logged, path);
});

Deno.test("anything shaped like a whole secret is redacted wherever it appears in a path", () => {
  const secret = "q3Z9xK-_T1bLm0PvW8sYd4RfHj2Ne7Ua6Oc5Gi1Bk9Xw"; // 44 base64url characters
  const boundary = "at_1234567890_s1" + "4ZpQm9RtWx3Ab7KcLd2EfGh5JkNq8SuVy6" + "Zb2Cd3Ef4Gh";
  const cases: [string, string][] = [
    [`/api/v1/box/alice/${secret}`, "/api/v1/box/alice/***"],
    [`/x/wharf_${secret}/y`, "/x/***/y"],
    [`/v1/auth-tokens/${boundary}`, "/v1/auth-tokens/***"],
    [`/v1/x/${secret.replace("q", "%71")}`, "/v1/x/%***"],
  ];
  for (const [path, logged] of cases) assertEquals(redactor.redact(path), logged, path);
  // Long names that are not random stay readable.
  for (
    const path of [
      "/api/v1/box/alice/a-very-long-box-name-that-anyone-could-choose-x",
      "/api/v1/box/alice/UBUNTU_SERVER_LTS_MINIMAL_CLOUD_IMAGE_VERSION_TWO",
    ]
  ) assertEquals(redactor.redact(path), path);
});
