import "server-only";
import { config } from "./config";
import { startLessonsBackfill } from "../views/lessons/backfill";
import { parseWorkspaceRoots } from "../views/verdict/roots";
import { startWatchdog } from "../board/watchdog/scheduler";
import { watchHandoffFolders, type FolderWatcher } from "../ingest/watch/folder-watcher";
import { scheduleWriteBack } from "../human/writeback/write-human-section";
import { startWebhookLoops } from "../notify/start";
import { announceFirstRun } from "./first-run";
import { processSlot } from "../core/singleton";

const watcher = processSlot<FolderWatcher>("Watcher");

/**
 * A packet's file appeared after the packet (decision 050): a decision made before the file
 * appeared is written into it. (Its verdict is read from the new workspace by itself: a
 * cached reading is kept only for the same place, lib/views/verdict/version.ts.)
 */
export function whenLocated(result: { thread_key: string }): Promise<void> {
  return scheduleWriteBack([result.thread_key]);
}

/** Background work of a running server, started once per process: checks settings, prints the first-run code, watches folders. */
export async function startServerBackground(): Promise<void> {
  // A typo in BATON_WORKSPACE_ROOTS stops the server at start, not at the first thread page.
  parseWorkspaceRoots(config().BATON_WORKSPACE_ROOTS);
  void announceFirstRun();
  startLessonsBackfill();
  startWatchdog();
  startWebhookLoops();
  const folders = config().BATON_WATCH_DIRS;
  if (!folders.length || watcher.value) return;
  watcher.value = watchHandoffFolders(folders, { onLocated: whenLocated });
  console.log(`baton: watching ${folders.join(", ")} for handoff.json files`);
}
