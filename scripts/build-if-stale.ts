import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";

// What a production build depends on; a change to any of these rebuilds on `npm start`.
const INPUTS = ["app", "components", "lib", "instrumentation.ts", "instrumentation-client.ts", "proxy.ts", "next.config.ts", "postcss.config.mjs", "package.json", "tsconfig.json"];
const DIST_DIR = process.env.BATON_DIST_DIR ?? ".next";
const STAMP = path.join(DIST_DIR, "baton-source-hash");
/**
 * BATON_BUILD_SKIP_TYPECHECK=1 (set by .ci/run for its `npm test`, which runs `tsc` beside
 * it anyway) builds without Next's own type check (next.config.ts). Such a build is stamped
 * "unchecked": it is reused only by another run that asked for one, so `npm start` and a
 * plain `npm test` type-check again.
 */
const SKIP_TYPECHECK = process.env.BATON_BUILD_SKIP_TYPECHECK === "1";
const UNCHECKED = " unchecked";

function* files(entry: string): Generator<string> {
  if (!existsSync(entry)) return;
  if (statSync(entry).isFile()) {
    yield entry;
    return;
  }
  for (const child of readdirSync(entry).sort()) {
    if (child === "generated" || child.endsWith(".test.ts")) continue;
    yield* files(path.join(entry, child));
  }
}

export function sourceHash(): string {
  const hash = createHash("sha256");
  for (const input of INPUTS) {
    for (const file of files(input)) hash.update(file).update(readFileSync(file));
  }
  return hash.digest("hex");
}

/** Builds the app unless the last build was made from the same sources. */
export function buildIfStale(): void {
  const current = sourceHash();
  const built = existsSync(path.join(DIST_DIR, "BUILD_ID")) && existsSync(STAMP) ? readFileSync(STAMP, "utf8") : "";
  if (built === current || (SKIP_TYPECHECK && built === current + UNCHECKED)) return;
  console.log(`baton: building the app (first start, or the sources changed)${SKIP_TYPECHECK ? ", without its type check" : ""}...`);
  const result = spawnSync("npx", ["next", "build"], { stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
  writeFileSync(STAMP, SKIP_TYPECHECK ? current + UNCHECKED : current);
}

if (import.meta.url === `file://${process.argv[1]}`) buildIfStale();
