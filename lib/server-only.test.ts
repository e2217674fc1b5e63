import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Every lib module that touches the database, the file system, secrets or Node-only APIs,
 * or imports one that does, begins with `import "server-only"`, so a new one cannot forget
 * it (docs/decisions/039-server-only-modules.md).
 */
const ROOT = process.cwd();
const MARK = 'import "server-only";';

/** Node's own modules, the database drivers and the native or file-watching packages. */
const NODE_ONLY =
  /^node:|^(fs|path|child_process|crypto|os|net|http|https|dns|stream|url|util|worker_threads|zlib|events|readline|tty|perf_hooks|async_hooks|v8)(\/|$)|^@prisma\/|^(pg|better-sqlite3|chokidar)$|^@node-rs\//;
const PROCESS_STATE = /\bprocess\.(env|cwd|exit|kill|pid|argv|stdin|stdout|stderr|on|once)\b/;

/**
 * Left out: the contract (lib/contract hashes with node:crypto and is shared by the CLI,
 * the server and the tests); test support lives in testing/, outside lib/.
 */
const EXEMPT = [/^lib\/generated\//, /^lib\/contract\//, /\.test\.ts$/];

function libModules(dir = "lib"): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return relative === "lib/generated" ? [] : libModules(relative);
    return entry.name.endsWith(".ts") ? [relative] : [];
  });
}

/** The specifiers a module imports for their values (type-only imports are erased). */
function valueImports(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/^\s*(?:import|export)\s+(?!type\s)[^;"]*?\sfrom\s+"([^"]+)"/gm)) found.push(match[1]!);
  for (const match of text.matchAll(/^\s*import\s+"([^"]+)"/gm)) found.push(match[1]!);
  for (const match of text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)) found.push(match[1]!);
  return found;
}

function resolveLocal(from: string, specifier: string): string | null {
  const base = specifier.startsWith("@/") ? specifier.slice(2) : specifier.startsWith(".") ? path.join(path.dirname(from), specifier) : null;
  if (base === null) return null;
  for (const candidate of [base, `${base}.ts`, `${base}/index.ts`]) {
    if (candidate.endsWith(".ts") && existsSync(path.join(ROOT, candidate))) return candidate;
  }
  return null;
}

describe('import "server-only"', () => {
  const modules = libModules().map((file) => ({ file, text: readFileSync(path.join(ROOT, file), "utf8") }));
  const checked = modules.filter(({ file }) => !EXEMPT.some((pattern) => pattern.test(file)));

  /** Touches Node directly, or (to a fixed point) imports a local module that does. */
  const serverModules = new Set<string>();
  const importsOf = new Map(modules.map(({ file, text }) => [file, valueImports(text)]));
  for (const { file, text } of modules) {
    const imports = importsOf.get(file)!;
    const touchesGenerated = imports.some((specifier) => resolveLocal(file, specifier)?.startsWith("lib/generated/"));
    if (imports.some((specifier) => NODE_ONLY.test(specifier)) || touchesGenerated || PROCESS_STATE.test(text)) serverModules.add(file);
  }
  for (let grew = true; grew; ) {
    grew = false;
    for (const { file } of modules) {
      if (serverModules.has(file)) continue;
      if (importsOf.get(file)!.some((specifier) => serverModules.has(resolveLocal(file, specifier) ?? ""))) {
        serverModules.add(file);
        grew = true;
      }
    }
  }

  it("starts every server module in lib/", () => {
    const unmarked = checked.filter(({ file, text }) => serverModules.has(file) && !text.startsWith(MARK)).map(({ file }) => file);
    expect(unmarked, `add ${MARK} as the first line of:\n${unmarked.join("\n")}`).toEqual([]);
  });

  it("marks nothing that touches no server module (the browser may import it)", () => {
    const needless = checked.filter(({ file, text }) => text.startsWith(MARK) && !serverModules.has(file)).map(({ file }) => file);
    expect(needless).toEqual([]);
  });
});
