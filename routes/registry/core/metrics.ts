// The registry's metrics (docs/operations.md#metrics): boxes, versions, providers and hosted bytes counted at
// scrape time from memory; downloads, uploads and their bytes counted as they happen.

import type { MetricsRegistry, ValueChild } from "../../../lib/metrics/mod.ts";
import type { BoxDoc } from "./model.ts";
import type { StoredDoc } from "../../../lib/store/mod.ts";

export class RegistryMetrics {
  readonly #downloads: ValueChild;
  readonly #redirects: ValueChild;
  readonly #downloadBytes: ValueChild;
  readonly #uploads: ValueChild;
  readonly #uploadBytes: ValueChild;

  constructor(registry: MetricsRegistry, boxes: () => Iterable<StoredDoc<BoxDoc>>) {
    this.#downloads = registry.counterValue(
      "wharf_registry_downloads_total",
      "Box downloads counted (as the box's download count counts them: a whole file or a range from byte 0).",
    );
    this.#redirects = registry.counterValue(
      "wharf_registry_download_redirects_total",
      "Downloads answered with a redirect (an external URL or a presigned object-store URL).",
    );
    this.#downloadBytes = registry.counterValue(
      "wharf_registry_download_bytes_total",
      "Bytes of hosted files answered by this node (Content-Length of 200 and 206 answers; a client may stop early).",
    );
    this.#uploads = registry.counterValue("wharf_registry_uploads_total", "Box files uploaded and stored.");
    this.#uploadBytes = registry.counterValue(
      "wharf_registry_upload_bytes_total",
      "Bytes of box files uploaded and stored.",
    );
    const objects = registry.gauge(
      "wharf_registry_objects",
      "The registry's contents by kind: boxes, versions, providers, hosted_files (distinct box files providers point at).",
      ["kind"],
    );
    const kinds = ["boxes", "versions", "providers", "hosted_files"] as const;
    const counts = kinds.map((k) => objects.labels(k));
    const hostedBytes = registry.gaugeValue(
      "wharf_registry_hosted_bytes",
      "Bytes of the distinct hosted box files providers point at (the blob store's live content).",
    );
    registry.onScrape(() => {
      const n = [0, 0, 0, 0];
      let bytes = 0;
      const seen = new Set<string>();
      for (const box of boxes()) {
        n[0]!++;
        for (const v of box.doc.versions) {
          n[1]!++;
          for (const p of v.providers) {
            n[2]!++;
            if (p.blob && !seen.has(p.blob.sha256)) {
              seen.add(p.blob.sha256);
              bytes += p.blob.size;
            }
          }
        }
      }
      n[3] = seen.size;
      counts.forEach((c, i) => c.set(n[i]!));
      hostedBytes.set(bytes);
    });
  }

  downloadCounted(): void {
    this.#downloads.value++;
  }

  /** A download's answer: its bytes when it carries the file, a redirect otherwise. */
  downloadAnswered(response: Response): void {
    if (response.status === 302) this.#redirects.value++;
    else if (response.status === 200 || response.status === 206) {
      const length = Number(response.headers.get("Content-Length"));
      if (Number.isSafeInteger(length) && length > 0) this.#downloadBytes.value += length;
    }
  }

  uploadStored(bytes: number): void {
    this.#uploads.value++;
    this.#uploadBytes.value += bytes;
  }
}
