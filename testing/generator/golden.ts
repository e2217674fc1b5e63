import "server-only";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";

/** Golden files live in testing/fixtures/golden/; `UPDATE_GOLDEN=1 npx vitest run lib/generator` rewrites them. */
export const GOLDEN_DIR = fileURLToPath(new URL("../fixtures/golden/", import.meta.url));

export async function expectGolden(scenario: string, file: string, actual: string): Promise<void> {
  const golden = path.join(GOLDEN_DIR, scenario, file);
  if (process.env.UPDATE_GOLDEN === "1") {
    await mkdir(path.dirname(golden), { recursive: true });
    await writeFile(golden, actual);
    return;
  }
  const expected = await readFile(golden, "utf8").catch(() => {
    throw new Error(`no golden file ${path.relative(process.cwd(), golden)}; write it with UPDATE_GOLDEN=1`);
  });
  expect(actual, `${scenario}/${file} differs from its golden file (UPDATE_GOLDEN=1 rewrites it; review the diff)`).toBe(expected);
}
