import { config } from "../config";
import { watchHandoffFolders, type FolderWatcher } from "../watch/folder-watcher";

const holder = globalThis as unknown as { __batonWatcher?: FolderWatcher };

/** Background work of a running server: the watched folders. Started once per process. */
export async function startServerBackground(): Promise<void> {
  const folders = config().BATON_WATCH_DIRS;
  if (!folders.length || holder.__batonWatcher) return;
  holder.__batonWatcher = watchHandoffFolders(folders);
  console.log(`baton: watching ${folders.join(", ")} for handoff.json files`);
}
