import "server-only";
import { watch, type FSWatcher } from "chokidar";
import { config } from "../../server/config";
import { ingestHandoffFile } from "./ingest-file";
import type { IngestResult } from "../types";
import { findChangedHandoffs } from "./rescan";
import { handoffFileKind } from "./handoff-files";

export interface FolderWatcher {
  /** Resolves once the initial scan of every folder is done. */
  ready: Promise<void>;
  /** Resolves when every file event seen so far has been handled. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Watches folders for handoff files (`handoff.json` and Markdown handoffs: handoff-files.ts;
 * created or changed, at any depth)
 * and ingests each through the one ingest path. Events for one file are
 * handled in order, one at a time; a failure is logged, never thrown.
 */
export interface WatchOptions {
  rescanMs?: number;
  /**
   * A file's location was recorded on a version that arrived first another way: the
   * caller writes back a person's decision already made on it (decision 050).
   */
  onLocated?: (result: IngestResult) => Promise<void>;
}

export function watchHandoffFolders(folders: string[], options: WatchOptions = {}): FolderWatcher {
  const queues = new Map<string, Promise<void>>();
  let firstScanDone = false;
  const failedBeforeFirstScan = new Set<string>();
  // What the periodic rescan has seen of each file (below).
  const seen = new Map<string, string>();
  const watcher: FSWatcher = watch(folders, {
    ignoreInitial: false,
    persistent: true,
    // Agents write in several steps; wait until a file's size has settled.
    awaitWriteFinish: { stabilityThreshold: 200, pollInterval: 50 },
    // A linked folder could lead outside the watched one; a linked file is refused at read.
    followSymlinks: false,
    ignored: (file, stats) => Boolean(stats?.isFile() && handoffFileKind(file) === null),
  });

  const enqueue = (file: string) => {
    if (handoffFileKind(file) === null) return;
    const previous = queues.get(file) ?? Promise.resolve();
    const next = previous
      .then(() => ingestHandoffFile(file))
      .then(async (outcome) => {
        if (outcome.kind === "ingested" && outcome.result.locationRecorded) await options.onLocated?.(outcome.result);
      })
      .then(
        () => undefined,
        (error: unknown) => {
          console.error(`baton: watching ${file} failed:`, error instanceof Error ? error.message : error);
          // Bad files come back as outcomes; a throw is the server's failure (a busy database, a
          // driver error): nothing was stored, so forgetting the file makes the next rescan take it
          // again (one that fails before the first scan is forgotten again after it, below).
          seen.delete(file);
          if (!firstScanDone) failedBeforeFirstScan.add(file);
        },
      );
    queues.set(file, next);
    void next.finally(() => {
      if (queues.get(file) === next) queues.delete(file);
    });
  };
  watcher.on("add", enqueue);
  watcher.on("change", enqueue);
  watcher.on("error", (error) => console.error("baton: folder watcher error:", error));

  const ready = new Promise<void>((resolve) => watcher.once("ready", () => resolve()));

  // A periodic rescan catches what the watcher missed (a file written into a folder
  // created a moment before); re-reading known content is only a dedupe.
  // The first scan only records what is there (the watcher's initial events ingest it), so a
  // file whose ingest already failed would be recorded as taken: forget it again.
  let rescanning: Promise<void> = ready
    .then(() => findChangedHandoffs(folders, seen))
    .then(() => {
      firstScanDone = true;
      for (const file of failedBeforeFirstScan) seen.delete(file);
      failedBeforeFirstScan.clear();
    });
  const timer = setInterval(() => {
    rescanning = rescanning
      .then(() => findChangedHandoffs(folders, seen))
      .then((files) => files.forEach(enqueue))
      .catch((error: unknown) => console.error("baton: rescanning watched folders failed:", error));
  }, options.rescanMs ?? config().BATON_WATCH_RESCAN_SECONDS * 1000);
  timer.unref();

  return {
    ready,
    async idle() {
      while (queues.size) await Promise.all([...queues.values()]);
    },
    async close() {
      clearInterval(timer);
      await rescanning;
      await watcher.close();
    },
  };
}
