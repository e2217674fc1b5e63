import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

/**
 * The dependency rules of eslint.config.mjs bite: each forbidden import below fails
 * `npm run lint`, and an allowed one passes. Linted as text at the path it would have.
 */
const eslint = new ESLint({ cwd: process.cwd() });

async function restrictedImports(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.filter((message) => message.ruleId === "no-restricted-imports").map((message) => message.message);
}

describe("architecture rules in npm run lint", () => {
  it.each([
    ["lib/contract/new-rule.ts", 'import { database } from "../db/client";\nexport const x = database;\n', /contract/],
    ["lib/contract/new-rule.ts", 'import { errorResponse } from "../http/respond";\nexport const x = errorResponse;\n', /contract/],
    ["lib/contract/new-rule.ts", 'import { useState } from "react";\nexport const x = useState;\n', /contract/],
    ["components/board/new-card.tsx", 'import { loadBoard } from "@/lib/board/board";\nexport const x = loadBoard;\n', /Components and browser hooks/],
    ["components/thread/new-list.tsx", 'import { appendLedgerEvents } from "@/lib/events/ledger";\nexport const x = appendLedgerEvents;\n', /Components and browser hooks/],
    ["components/admin/new-panel.tsx", 'import { POSTGRESQL_POOL_SIZE } from "@/lib/db/postgresql";\nexport const x = POSTGRESQL_POOL_SIZE;\n', /Components and browser hooks/],
    ["lib/browser/use-new-hook.ts", 'import { readFile } from "node:fs/promises";\nexport const x = readFile;\n', /Components and browser hooks/],
    ["lib/ingest/new-step.ts", 'import { jsonResponse } from "../http/respond";\nexport const x = jsonResponse;\n', /Ingest imports no HTTP layer/],
    ["lib/browser/use-new-feed.ts", 'import { ledgerFeed } from "../events/ledger-feed";\nexport const x = ledgerFeed;\n', /Components and browser hooks/],
    ["components/shared/new-badge.tsx", 'import { database } from "@/lib/db/client";\nexport const x = database;\n', /Components and browser hooks/],
    ["lib/board/new-thing.ts", 'import { BoardView } from "@/components/board/board-view";\nexport const x = BoardView;\n', /Nothing in lib\/ imports app\/ or components\//],
  ])("%s: a forbidden import fails", async (filePath, code, message) => {
    const messages = await restrictedImports(filePath, code);
    expect(messages.length, messages.join("\n")).toBe(1);
    expect(messages[0]).toMatch(message);
  }, 60_000);

  it("allows what the architecture allows: a component importing a DTO, the contract importing zod", async () => {
    expect(await restrictedImports("components/thread/new-list.tsx", 'import type { LedgerEventDto } from "@/lib/events/dto";\nexport type X = LedgerEventDto;\n')).toEqual([]);
    expect(await restrictedImports("lib/contract/new-rule.ts", 'import { z } from "zod";\nexport const x = z;\n')).toEqual([]);
  }, 60_000);

  it("refuses a module over 300 lines (a component over 250), outside tests and bench/", async () => {
    const lines = (count: number) => Array.from({ length: count }, (_, index) => `export const x${index} = ${index};`).join("\n") + "\n";
    const tooLong = async (filePath: string, count: number) => {
      const [result] = await eslint.lintText(lines(count), { filePath });
      return result!.messages.some((message) => message.ruleId === "max-lines");
    };
    expect(await tooLong("lib/board/new-thing.ts", 300)).toBe(false);
    expect(await tooLong("lib/board/new-thing.ts", 301)).toBe(true);
    expect(await tooLong("components/board/new-card.tsx", 250)).toBe(false);
    expect(await tooLong("components/board/new-card.tsx", 251)).toBe(true);
    expect(await tooLong("lib/board/new-thing.test.ts", 400)).toBe(false);
    expect(await tooLong("bench/new-bench.ts", 400)).toBe(false);
  }, 60_000);
});
