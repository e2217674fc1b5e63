import "server-only";
import { randomBytes } from "node:crypto";
import { open, rename, rm, stat } from "node:fs/promises";
import path from "node:path";

const DEFAULT_MODE = 0o644;

/**
 * Replaces `target` with `data` so that readers only ever see the old or the new
 * content, never a mix, and the new content survives a crash once this resolves.
 */
export async function writeFileAtomic(target: string, data: string | Uint8Array): Promise<void> {
  const temp = await writeTempFileBeside(target, data);
  try {
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await fsyncDirectory(path.dirname(target));
}

/**
 * Writes `data` to a new, fsynced temp file next to `target` and returns its path.
 * Same folder, because rename is only atomic within one file system. The temp file
 * takes the target's mode, so replacing a file does not widen or narrow who can read it.
 * On failure nothing is left behind.
 */
export async function writeTempFileBeside(target: string, data: string | Uint8Array): Promise<string> {
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
  const mode = await modeOf(target);
  const handle = await open(temp, "wx", mode);
  try {
    try {
      await handle.writeFile(data);
      await handle.chmod(mode); // the umask may have narrowed the mode given to open
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  return temp;
}

/** Makes a rename inside `dir` durable. Some platforms cannot open or fsync a folder; there is nothing more to do there. */
export async function fsyncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EISDIR" && code !== "EINVAL") throw error;
  }
}

async function modeOf(target: string): Promise<number> {
  try {
    return (await stat(target)).mode & 0o7777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return DEFAULT_MODE;
    throw error;
  }
}
