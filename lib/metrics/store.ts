// Storage metrics: commit latency and outcomes (timed by the document store), the event log's head, size and
// checkpoint lag, documents per collection, and on a cluster the view's lag, the database and the object store.

import type { DataDir } from "../store/mod.ts";
import type { MetricsRegistry } from "./registry.ts";

export function registerStoreMetrics(registry: MetricsRegistry, data: DataDir): void {
  const commitSeconds = registry.histogram(
    "wharf_store_commit_duration_seconds",
    "Time a commit took from asking for its locks to being durable (its _count is the commit rate).",
  ).labels();
  const failed = registry.counterValue(
    "wharf_store_commit_failures_total",
    "Commits that did not commit (a plan refused the write, or the storage failed).",
  );
  data.store.observeCommits((seconds, committed) => {
    commitSeconds.observe(seconds);
    if (!committed) failed.inc();
  });

  const head = registry.gaugeValue(
    "wharf_store_log_head_index",
    "Index of the newest commit this node has applied.",
  );
  const first = registry.gaugeValue(
    "wharf_store_log_first_index",
    "Index of the oldest commit the event log retains.",
  );
  const logBytes = registry.gauge(
    "wharf_store_log_bytes",
    "Bytes of the event log's retained segment files (data directory only).",
  );
  const lag = registry.gaugeValue(
    "wharf_store_checkpoint_lag_indexes",
    "Commits applied since the last document checkpoint: what a restart would replay.",
  );
  const documents = registry.gauge("wharf_store_documents", "Documents held, by collection.", ["collection"]);
  const cluster = registerClusterMetrics(registry);

  registry.onScrape(() => {
    const log = data.log as typeof data.log & { sizeBytes?: number };
    head.set(log.lastIndex);
    first.set(log.firstIndex);
    if (log.sizeBytes !== undefined) logBytes.labels().set(log.sizeBytes);
    lag.set(Math.max(0, log.lastIndex - data.store.checkpointIndex));
    for (const c of data.store.collections()) documents.labels(c).set(data.store.count(c));
    cluster(data);
  });
}

function registerClusterMetrics(registry: MetricsRegistry): (data: DataDir) => void {
  const viewLag = registry.gauge(
    "wharf_cluster_view_lag_indexes",
    "Commits the database announced that this node has not applied yet (cluster only).",
  );
  const databaseUp = registry.gauge(
    "wharf_cluster_database_up",
    "1 when this node's last database request succeeded, 0 after a failure (cluster only).",
  );
  const batches = registry.counter(
    "wharf_cluster_commit_batches_total",
    "Group-commit transactions this node ran on the database (cluster only).",
  );
  const members = registry.counter(
    "wharf_cluster_commit_members_total",
    "Commits carried by those transactions: members / batches is how well commits are grouped (cluster only).",
  );
  const poolWaiting = registry.gauge(
    "wharf_cluster_db_pool_waiting",
    "Commits waiting for a connection of the database commit pool (10 connections) (cluster only).",
  );
  const poolReplaced = registry.counter(
    "wharf_cluster_db_pool_replaced_total",
    "Times the database commit pool was dropped and opened again after a connection failed (cluster only).",
  );
  const objectStoreErrors = registry.counter(
    "wharf_cluster_object_store_errors_total",
    "Object-store requests that could not reach the store (S3 blob store only).",
  );
  return (data) => {
    const stats = data.clusterStats();
    if (!stats) return;
    if (data.backend === "postgres") {
      viewLag.labels().set(stats.viewLag);
      databaseUp.labels().set(stats.databaseUp ? 1 : 0);
      batches.labels().set(stats.commitBatches);
      members.labels().set(stats.commitMembers);
      poolWaiting.labels().set(stats.poolWaiting);
      poolReplaced.labels().set(stats.poolReplaced);
    }
    if (stats.objectStoreErrors !== undefined) objectStoreErrors.labels().set(stats.objectStoreErrors);
  };
}
