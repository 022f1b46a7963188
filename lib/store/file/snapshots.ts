// The data directory's checkpoint behind DocSnapshots: documents in data/<family>/<collection>/<id>.json (packed
// collections as packs of many, packs.ts) and manifest.json naming the log index they reflect.

import type { StoredDoc } from "../doc_types.ts";
import type { DocSnapshots, SnapshotContext, SnapshotEntry } from "../snapshots.ts";
import { fileNameForId } from "../doc_names.ts";
import { writeChangedDocuments } from "./checkpoint.ts";
import { collectionFolders, readCheckpointIndex, readCollectionFolder } from "./collection_folder.ts";
import { atomicWrite, ensureDir, removeTempFiles, syncDir } from "./fsutil.ts";
import { PackFolder } from "./packs.ts";

const encoder = new TextEncoder();
/**
 * Files written at once by a checkpoint. In the background a few are enough and keep request latency flat (32
 * concurrent fsyncs stalled requests on a 2-core machine: /health p99 23–28 ms against 7–8 ms with 4); at
 * shutdown, when nothing else waits, many overlap their fsyncs to finish sooner.
 */
const backgroundParallelism = 4;
const shutdownParallelism = 32;

export class FileSnapshots implements DocSnapshots {
  readonly root: string;
  /** Collections checkpointed as packs: the configured ones and any found packed on disk. */
  readonly #packed: Set<string>;
  readonly #packs = new Map<string, PackFolder>();

  /** `packed` names collections whose checkpoints are packs of many documents rather than a file each. */
  constructor(root: string, packed: Iterable<string> = []) {
    this.root = root;
    this.#packed = new Set(packed);
  }

  async load(): Promise<
    { checkpointIndex: number; docs: Iterable<{ collection: string; stored: StoredDoc }> }
  > {
    await ensureDir(this.root);
    const checkpointIndex = await readCheckpointIndex(this.root);
    await removeTempFiles(this.root);
    const collections: Array<{ collection: string; docs: Map<string, StoredDoc> }> = [];
    for (const { collection, dir } of collectionFolders(this.root)) {
      const docs = new Map<string, StoredDoc>();
      const folder = readCollectionFolder(dir, docs, this.#packed.has(collection));
      if (folder) {
        this.#packed.add(collection);
        this.#packs.set(collection, folder);
      }
      collections.push({ collection, docs });
    }
    return { checkpointIndex, docs: eachDoc(collections) };
  }

  async write(entries: SnapshotEntry[], upTo: number, context: SnapshotContext): Promise<void> {
    await writeChangedDocuments(entries, {
      root: this.root,
      upTo,
      parallelism: context.background ? backgroundParallelism : shutdownParallelism,
      fileName: fileNameForId,
      packFolder: (collection) => this.#packed.has(collection) ? this.#packFolder(collection) : undefined,
      live: (collection) => context.live(collection),
    });
    await this.#writeManifest(upTo);
  }

  /**
   * Writes a whole snapshot at `upTo` into this empty root (a restore), one batch of documents at a time: per
   * collection the files, or the pack, that a checkpoint of a server holding those documents writes, then the
   * manifest. Never holds more than a batch. Each collection comes once; returns the documents written.
   */
  async writeStreamed(
    collections: AsyncIterable<{ collection: string; batches: AsyncIterable<StoredDoc[]> }>,
    upTo: number,
    progress: (documents: number) => void = () => {},
  ): Promise<number> {
    let documents = 0;
    for await (const { collection, batches } of collections) {
      const dir = `${this.root}/${collection}`;
      await ensureDir(dir);
      if (this.#packed.has(collection)) {
        documents += await this.#packFolder(collection).writeFirst(upTo, batches);
        await syncDir(dir);
        progress(documents);
      } else {
        for await (const batch of batches) {
          const entries = batch.map((current) => ({ collection, id: current.id, current }));
          // A file per document, as a checkpoint at shutdown writes them; the folder is fsynced per batch.
          await writeChangedDocuments(entries, {
            root: this.root,
            upTo,
            parallelism: shutdownParallelism,
            fileName: fileNameForId,
            packFolder: () => undefined,
            live: () => [],
          });
          documents += batch.length;
          progress(documents);
        }
      }
    }
    await this.#writeManifest(upTo);
    return documents;
  }

  async #writeManifest(upTo: number): Promise<void> {
    await atomicWrite(
      `${this.root}/manifest.json`,
      encoder.encode(JSON.stringify({ checkpointIndex: upTo })),
    );
  }

  #packFolder(collection: string): PackFolder {
    let folder = this.#packs.get(collection);
    if (!folder) this.#packs.set(collection, folder = new PackFolder(`${this.root}/${collection}`));
    return folder;
  }
}

function* eachDoc(
  collections: Array<{ collection: string; docs: Map<string, StoredDoc> }>,
): Generator<{ collection: string; stored: StoredDoc }> {
  for (const { collection, docs } of collections) {
    for (const stored of docs.values()) yield { collection, stored };
  }
}
