import "server-only";
import { constants, renameSync, statSync } from "node:fs";
import { open, realpath, rm, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fsyncDirectory, writeTempFileBeside } from "../../server/fs/atomic-write";
import { PACKET_MAX_BYTES } from "../../contract/schema";
import { isInside } from "../../server/fs/inside";

export type WriteBackOutcome =
  | { kind: "written" }
  /** The file no longer holds the version Baton ingested; `text` is what it holds now, for the caller to ingest. */
  | { kind: "agent_changed"; text: string }
  /** The file is gone. */
  | { kind: "missing" }
  /** The path is a symlink to a file outside its own folder: Baton writes only inside the packet's folder. */
  | { kind: "outside_folder" }
  /** The path now holds a FIFO, a device or a folder: Baton never reads or replaces one. */
  | { kind: "not_regular" };

export interface WriteBackInput {
  path: string;
  /** True when the file's current text still holds the version Baton ingested. */
  holdsIngestedVersion: (text: string) => boolean;
  /** Builds the bytes to write from the file's current text (the caller re-serialises the agent's fields, in their order, with the `human` section). */
  render: (currentText: string) => string;
}

/**
 * Writes a merged packet back into an agent's handoff.json, whole, without losing an agent
 * edit that races it; the windows left open: docs/decisions/015-write-back.md.
 */
export async function writeBackHandoff(input: WriteBackInput): Promise<WriteBackOutcome> {
  // Through a symlink to the real file: renaming over the link would replace it with a copy.
  const requested = path.resolve(input.path);
  const file = await realpathIfExists(requested);
  if (!file) return MISSING;
  // An agent (or anyone who can write its folder) could point the link anywhere Baton may write.
  const folder = await realpathIfExists(path.dirname(requested));
  if (!folder || !isInside(folder, file)) return OUTSIDE_FOLDER;
  return serialised(file, () => writeBack(file, input.holdsIngestedVersion, input.render));
}

const WRITTEN: WriteBackOutcome = { kind: "written" };
const MISSING: WriteBackOutcome = { kind: "missing" };
const OUTSIDE_FOLDER: WriteBackOutcome = { kind: "outside_folder" };
const NOT_REGULAR: WriteBackOutcome = { kind: "not_regular" };
const agentChanged = (text: string): WriteBackOutcome => ({ kind: "agent_changed", text });
/** Returned when the agent atomically replaced the file with the version we ingested: start over on the new inode. */
const RETRY = "retry";
const MAX_ATTEMPTS = 5;

async function writeBack(
  file: string,
  holds: (text: string) => boolean,
  render: (text: string) => string,
): Promise<WriteBackOutcome> {
  for (let attempt = 1; ; attempt++) {
    const outcome = await attemptWriteBack(file, holds, render);
    if (outcome !== RETRY) return outcome;
    if (attempt === MAX_ATTEMPTS) throw new Error(`${file} kept being replaced while writing it back`);
  }
}

async function attemptWriteBack(
  file: string,
  holds: (text: string) => boolean,
  render: (text: string) => string,
): Promise<WriteBackOutcome | typeof RETRY> {
  const handle = await openIfExists(file);
  if (!handle) return MISSING;
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) return NOT_REGULAR;
    const text = await readSettled(() => readAll(handle));
    if (!holds(text)) return agentChanged(text);

    const rendered = render(text);
    const temp = await writeTempFileBeside(file, rendered);
    let renamed = false;
    try {
      const verdict = await renameIfUnchanged(temp, file, handle, opened.ino, opened.dev, holds);
      if (verdict) return verdict;
      renamed = true;
    } finally {
      if (!renamed) await rm(temp, { force: true });
    }
    await fsyncDirectory(path.dirname(file));
    return await rescueInPlaceEdit(file, handle, holds, rendered);
  } finally {
    await handle.close();
  }
}

/**
 * Renames `temp` over `file` unless the agent changed the file since we read it;
 * returns null once renamed. We compare text rather than size and mtime: file
 * timestamps tick coarsely, so a same-length rewrite can leave both unchanged, and
 * handoff files are small.
 */
async function renameIfUnchanged(
  temp: string,
  file: string,
  handle: FileHandle,
  ino: number,
  dev: number,
  holds: (text: string) => boolean,
): Promise<WriteBackOutcome | typeof RETRY | null> {
  const current = await readSettled(() => readAll(handle));
  if (!holds(current)) return agentChanged(current);
  // Stat and rename back to back, synchronously: with no event-loop turn between
  // them, an agent's rename can only slip in during these two syscalls.
  const now = statIfExistsSync(file);
  if (!now) return MISSING;
  if (now.ino === ino && now.dev === dev) {
    renameSync(temp, file);
    return null;
  }
  // The agent renamed a new file into place: judge that one.
  const replacement = await openIfExists(file);
  if (!replacement) return MISSING;
  try {
    if (!(await replacement.stat()).isFile()) return NOT_REGULAR;
    const text = await readSettled(() => readAll(replacement));
    return holds(text) ? RETRY : agentChanged(text);
  } finally {
    await replacement.close();
  }
}

/**
 * Our rename unlinked the old inode. If the agent wrote into it in place after our
 * check, that write now lives only there: put it back, unless the agent has written
 * the path again since (its newer file stands, and the watcher will pick it up).
 */
async function rescueInPlaceEdit(
  file: string,
  oldInode: FileHandle,
  holds: (text: string) => boolean,
  rendered: string,
): Promise<WriteBackOutcome> {
  const text = await readSettled(() => readAll(oldInode));
  if (holds(text)) return WRITTEN;
  // Never put unparseable bytes on disk ourselves; the caller still gets the text.
  if (parsesAsJson(text)) await writeBack(file, (current) => current === rendered, () => text);
  return agentChanged(text);
}

/**
 * Text that does not parse is most likely an in-place write caught between its
 * truncate and its write: give the agent a moment to finish before judging it.
 */
const SETTLE_TRIES = 20;
const SETTLE_MS = 5;
/** How long an in-place write may take and still be put back (decision 015's second window). */
export const SETTLE_WAIT_MS = SETTLE_TRIES * SETTLE_MS;
async function readSettled(read: () => Promise<string>): Promise<string> {
  let text = await read();
  for (let tries = 0; tries < SETTLE_TRIES && !parsesAsJson(text); tries++) {
    await sleep(SETTLE_MS);
    text = await read();
  }
  return text;
}

export function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Reads the whole file from position 0, so the same handle can be read again. A read
 * that comes back short has hit EOF, so a small file takes one read: a snapshot,
 * where readFile (stops at the size it stat-ed first) or reading on to a 0-byte read
 * can stitch two versions of a file rewritten in place together. Never more than one
 * packet's limit: a longer text cannot hold the ingested version anyway.
 */
async function readAll(handle: FileHandle): Promise<string> {
  const chunks: Buffer[] = [];
  for (let position = 0; position <= PACKET_MAX_BYTES; ) {
    const { bytesRead, buffer } = await handle.read(Buffer.alloc(READ_CHUNK), 0, READ_CHUNK, position);
    chunks.push(buffer.subarray(0, bytesRead));
    position += bytesRead;
    // Decoded as ingest decodes a file: a UTF-8 byte order mark is dropped, so a file
    // that starts with one still matches the version Baton ingested from it.
    if (bytesRead < READ_CHUNK) break;
  }
  return new TextDecoder("utf-8").decode(Buffer.concat(chunks));
}
const READ_CHUNK = 256 * 1024;

/** Opened without blocking: a FIFO swapped in for the file must not hang a file-system thread. */
async function openIfExists(file: string): Promise<FileHandle | null> {
  try {
    return await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

async function realpathIfExists(file: string): Promise<string | null> {
  try {
    return await realpath(file);
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

function statIfExistsSync(file: string) {
  try {
    return statSync(file);
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

const isNotFound = (error: unknown) => (error as NodeJS.ErrnoException).code === "ENOENT";

/** One write-back per path at a time in this process; the chain is dropped once idle. */
const queues = new Map<string, Promise<void>>();
function serialised<T>(key: string, task: () => Promise<T>): Promise<T> {
  const result = (queues.get(key) ?? Promise.resolve()).then(task);
  const tail = result.then(
    () => {},
    () => {},
  );
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return result;
}
