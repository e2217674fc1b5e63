import "server-only";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach } from "vitest";

/**
 * For tests: a fresh folder in the OS temp dir holding a workspace root (`ws/`)
 * and room beside it for files that must stay outside that root.
 */
export interface TempWorkspace {
  /** The folder holding `ws/` and anything "outside". */
  base: string;
  /** The workspace root. */
  root: string;
  write(relativeToBase: string, content: string | Buffer): Promise<string>;
  symlink(target: string, relativeToBase: string): Promise<string>;
  remove(): Promise<void>;
}

export async function makeTempWorkspace(): Promise<TempWorkspace> {
  const base = await fs.mkdtemp(path.join(os.tmpdir(), "baton-verdict-"));
  const root = path.join(base, "ws");
  await fs.mkdir(root);
  return {
    base,
    root,
    async write(relativeToBase, content) {
      const file = path.join(base, relativeToBase);
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, content);
      return file;
    },
    async symlink(target, relativeToBase) {
      const link = path.join(base, relativeToBase);
      await fs.mkdir(path.dirname(link), { recursive: true });
      await fs.symlink(target, link);
      return link;
    },
    remove: () => fs.rm(base, { recursive: true, force: true }),
  };
}

/**
 * A fresh workspace for each test of the calling `describe` block, removed after it. The
 * object stays the same; its fields are the current test's workspace.
 */
export function tempWorkspaceForEachTest(): TempWorkspace {
  const current = {} as TempWorkspace;
  beforeEach(async () => {
    Object.assign(current, await makeTempWorkspace());
  });
  afterEach(() => current.remove());
  return current;
}
