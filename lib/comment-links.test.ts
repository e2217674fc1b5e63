import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Comments cite docs/ pages by their full path, and every cited page exists: a renamed or
 * removed page fails here, not in a reader's head. (Strings are data: tests quote paths.)
 */
const ROOT = process.cwd();
const SOURCE_DIRS = ["lib", "app", "components", "cli", "scripts", "bin", "bench", "e2e"];
const SOURCE_FILES = ["proxy.ts", "instrumentation.ts", "instrumentation-client.ts", "next.config.ts", "vitest.config.ts", "playwright.config.ts", "eslint.config.mjs"];

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return ["generated", "results", "__golden__", "node_modules"].includes(entry.name) ? [] : sourceFiles(relative);
    return /\.(ts|tsx|js|mjs)$/.test(entry.name) ? [relative] : [];
  });
}

/** The text of a file's comments: // lines and /* blocks *\/ (not inside strings, as far as a line's start tells). */
function commentsOf(text: string): string {
  const blocks = [...text.matchAll(/\/\*[\s\S]*?\*\//g)].map((match) => match[0]);
  const lines = [...text.matchAll(/(?:^|[\s;{}(),])\/\/(?!\/)([^\n]*)/g)].map((match) => match[1]!);
  return [...blocks, ...lines].join("\n");
}

describe("comments", () => {
  const files = [...SOURCE_DIRS.flatMap((dir) => sourceFiles(dir)), ...SOURCE_FILES.filter((file) => existsSync(path.join(ROOT, file)))];
  const comments = files.map((file) => ({ file, text: commentsOf(readFileSync(path.join(ROOT, file), "utf8")) }));

  it("cite docs/ pages that exist, by their full path", () => {
    const broken: string[] = [];
    for (const { file, text } of comments) {
      for (const match of text.matchAll(/(?<![\w/.-])docs\/[\w./-]*[\w/]/g)) {
        const cited = match[0].replace(/\/$/, "");
        if (!existsSync(path.join(ROOT, cited))) broken.push(`${file}: ${cited}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("cite nothing outside the repository", () => {
    const outside = comments.filter(({ text }) => /\.\.\/shared\b|(?<![\w.])\/work\/|(?<![\w.])\/tmp\/baton/.test(text)).map(({ file }) => file);
    expect(outside).toEqual([]);
  });
});
