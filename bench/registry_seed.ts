// Fills a running registry with N released boxes through the real v1 API (box, version, external-url
// provider, release), a few requests in flight at a time, for the registry load benchmark.

import { RegistryApi } from "../tests/registry_clients/registry_api.ts";

const words = ["ubuntu", "debian", "alma", "rocky", "arch", "fedora", "alpine", "centos", "suse", "devbox"];

export function boxName(i: number): string {
  return `${words[i % words.length]}-${String(i).padStart(5, "0")}`;
}

/** Creates `count` public boxes owned by `owner`, each with an active 1.0.0 and a virtualbox provider. */
export async function seedBoxes(
  api: RegistryApi,
  token: string,
  owner: string,
  count: number,
  concurrency = 16,
  onProgress?: (done: number) => void,
): Promise<void> {
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const name = boxName(i);
      const B = `/api/v1/box/${owner}/${name}`;
      await api.expectOk("POST", "/api/v1/boxes", {
        token,
        body: {
          username: owner,
          name,
          short_description: `${words[(i * 7) % words.length]} image number ${i}`,
          description: `# ${name}\n\nA box for the load benchmark.`,
          is_private: false,
        },
      });
      await api.expectOk("POST", `${B}/versions`, { token, body: { version: { version: "1.0.0" } } });
      await api.expectOk("POST", `${B}/version/1.0.0/providers`, {
        token,
        body: {
          provider: {
            name: "virtualbox",
            url: `https://downloads.example.invalid/${owner}/${name}/1.0.0/virtualbox.box`,
            checksum: "ab".repeat(32),
            checksum_type: "sha256",
          },
        },
      });
      await api.expectOk("PUT", `${B}/version/1.0.0/release`, { token });
      done++;
      if (onProgress && done % 1000 === 0) onProgress(done);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}
