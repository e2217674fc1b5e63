import "server-only";
import { constants } from "node:fs";
import { lstat, open, readlink, realpath, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { isInside } from "./inside";

/**
 * What reading an agent-written file gave. Agent files are hostile input: a FIFO
 * would hang a file-system worker thread for good, a symlink to /dev/zero or a huge
 * file would grow memory without bound. So only a regular file is read, opened
 * without following a final symlink and without blocking, its size checked on the
 * open handle, and never more than `maxBytes` + 1 bytes read.
 */
export type RegularFileReading =
  | { kind: "ok"; bytes: Buffer }
  | { kind: "missing" }
  | { kind: "refused"; reason: string }
  | { kind: "too_large"; size: number };

export interface ReadRegularFileOptions {
  maxBytes: number;
  /**
   * Follow a symlink only to a file inside this folder (checked on what was opened, so a
   * link swapped meanwhile cannot lead out). Without it a symlink is refused.
   */
  linksWithin?: string;
}

// O_NOFOLLOW: a symlink as the last component is refused (ELOOP), never followed.
// O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer.
const NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const FOLLOW = constants.O_RDONLY | constants.O_NONBLOCK;

export async function readRegularFile(file: string, options: ReadRegularFileOptions): Promise<RegularFileReading> {
  let handle: FileHandle;
  try {
    handle = await open(file, options.linksWithin ? FOLLOW : NO_FOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { kind: "missing" };
    if (code === "ELOOP") return { kind: "refused", reason: "it is a symbolic link; Baton reads regular files only" };
    if (code === "EACCES" || code === "EPERM") return { kind: "refused", reason: "permission denied" };
    throw error;
  }
  try {
    if (options.linksWithin && !(await openedWithin(handle, file, options.linksWithin))) {
      return { kind: "refused", reason: "it is a symbolic link to a file outside its folder" };
    }
    const info = await handle.stat();
    if (!info.isFile()) return { kind: "refused", reason: `it is ${describeType(info)}, not a regular file` };
    if (info.size > options.maxBytes) return { kind: "too_large", size: info.size };
    const bytes = await readAtMost(handle, options.maxBytes + 1, info.size);
    // The file grew after the stat: still never more than the limit in memory.
    if (bytes.length > options.maxBytes) return { kind: "too_large", size: bytes.length };
    return { kind: "ok", bytes };
  } finally {
    await handle.close();
  }
}

/** Whether the file behind `handle` lies inside `folder` (both with symlinks resolved). */
async function openedWithin(handle: FileHandle, file: string, folder: string): Promise<boolean> {
  const [root, opened] = await Promise.all([
    realpath(folder).catch(() => null),
    // Linux names what a descriptor opened; elsewhere a symlink is simply refused.
    readlink(`/proc/self/fd/${handle.fd}`).catch(async () => ((await lstat(file)).isSymbolicLink() ? null : path.resolve(file))),
  ]);
  return root !== null && opened !== null && opened !== root && isInside(root, opened);
}

/**
 * Reads from position 0 until EOF or `limit` bytes, whichever comes first. The buffer starts at
 * `expected` + 1 bytes (the size a stat gave: one more shows the end in the first read) and grows
 * only while a file that grew keeps filling it: a buffer of the whole limit, zeroed for every
 * small file, cost more than reading it.
 */
export async function readAtMost(handle: FileHandle, limit: number, expected = limit): Promise<Buffer> {
  let buffer = Buffer.alloc(Math.max(1, Math.min(limit, expected + 1)));
  let filled = 0;
  while (filled < limit) {
    if (filled === buffer.length) {
      const grown = Buffer.alloc(Math.min(limit, buffer.length * 2));
      buffer.copy(grown, 0, 0, filled);
      buffer = grown;
    }
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

function describeType(info: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean }): string {
  if (info.isDirectory()) return "a directory";
  if (info.isFIFO()) return "a FIFO";
  if (info.isSocket()) return "a socket";
  if (info.isCharacterDevice() || info.isBlockDevice()) return "a device";
  return "a special file";
}
