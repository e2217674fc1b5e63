import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { expect, test } from "./support/fixtures";
import { findThread, uniqueId } from "./support/api";

/**
 * The whole loop: an agent's packet lands through a watched folder, a person
 * answers and intervenes in the browser, and the next session finds the human
 * section both through `baton pull` and in the handoff.json on disk, with the
 * agent's own fields exactly as it wrote them.
 */

const run = promisify(execFile);

function withoutHuman(text: string): string {
  const packet = JSON.parse(text) as Record<string, unknown>;
  delete packet.human;
  return JSON.stringify(packet);
}

test("answers and an intervention reach the next session through baton pull and the file on disk", async ({ page, request, agentToken, watchDir, baseURL }) => {
  const key = uniqueId("loop");
  const folder = path.join(watchDir, uniqueId("ws"), "outputs", "handoff", uniqueId("sess"));
  await mkdir(folder, { recursive: true });
  const file = path.join(folder, "handoff.json");
  // The agent's own key order (not alphabetical), nested objects and an unknown field.
  const packet = {
    thread: key,
    zeta_unknown: { b: 1, a: [3, 2, 1] },
    summary: "Moved the session store; two decisions needed.",
    next_action: "Run the migration on staging",
    questions_for_human: [
      { id: "q-db", question: "Which database for the session store?", options: ["SQLite", "PostgreSQL"], blocking: true },
      "Keep the v1 endpoint?",
    ],
    open_risks: [{ severity: "warn", detail: "staging data may be stale" }],
    changed_files: ["lib/session.ts"],
    commands_run: ["npm test"],
    failed_attempts: [],
    verdict_pointer: "outputs/verification/T-1.json",
  };
  const written = `${JSON.stringify(packet, null, 2)}\n`;
  await writeFile(file, written);
  await expect.poll(async () => (await findThread(request, agentToken, key))?.versions.length ?? 0, { timeout: 10_000 }).toBe(1);

  await page.goto(`/threads/${encodeURIComponent(key)}`);
  await page.getByRole("group", { name: "Options for: Which database for the session store?" }).getByRole("button", { name: "PostgreSQL" }).click();
  await expect(page.getByText("Answer: PostgreSQL")).toBeVisible();
  const second = page.getByRole("textbox", { name: "Answer: Keep the v1 endpoint?" });
  await second.fill("Yes, until March.");
  await second.press("Control+Enter");
  await expect(page.getByText("Answer: Yes, until March.")).toBeVisible();
  await page.getByRole("button", { name: /^Intervene on / }).click();
  await page.getByRole("textbox", { name: /^Instructions for the next session of/ }).fill("Back up the staging database first.");
  await page.getByRole("textbox", { name: /^Instructions for the next session of/ }).press("Enter");
  await expect(page.getByRole("region", { name: "People" })).toContainText("Back up the staging database first.");

  // On disk: the human section, written back atomically; the agent's fields as it wrote them.
  await expect.poll(async () => (JSON.parse(await readFile(file, "utf8")) as { human?: { revision: number } }).human?.revision, { timeout: 10_000 }).toBe(3);
  const onDisk = await readFile(file, "utf8");
  expect(withoutHuman(onDisk)).toBe(JSON.stringify(packet));
  const human = (JSON.parse(onDisk) as { human: Record<string, unknown> }).human;
  expect(human).toMatchObject({
    revision: 3,
    decision: { kind: "intervened", by: "admin" },
    answers: [
      { question_id: "q-db", question: "Which database for the session store?", answer: "PostgreSQL", by: "admin" },
      { question_id: "q1", question: "Keep the v1 endpoint?", answer: "Yes, until March.", by: "admin" },
    ],
    questions: [{ id: "h1", text: "Back up the staging database first.", by: "admin", blocking: true }],
  });

  // Baton's own write did not come back as a new agent version.
  await page.waitForTimeout(1_500);
  const detail = (await findThread(request, agentToken, key))!;
  expect(detail.versions).toHaveLength(1);
  expect(detail.human).toEqual(human);

  // baton pull: to stdout and to a file, the same merged packet.
  const env = { ...process.env, BATON_URL: baseURL!, BATON_TOKEN: agentToken };
  const pulled = await run("node", ["bin/baton.js", "pull", key], { env, encoding: "utf8" });
  const pulledPacket = JSON.parse(pulled.stdout) as { human: unknown };
  expect(pulledPacket.human).toEqual(human);
  expect(withoutHuman(pulled.stdout)).toBe(JSON.stringify(packet));
  const target = path.join(folder, "pulled.json");
  await run("node", ["bin/baton.js", "pull", key, "-o", target], { env, encoding: "utf8" });
  expect(JSON.parse(await readFile(target, "utf8"))).toEqual(pulledPacket);
});

test("an agent that rewrote its file is not written over: its new content becomes the next version", async ({ page, request, agentToken, watchDir }) => {
  const key = uniqueId("agent-first");
  const folder = path.join(watchDir, uniqueId("ws"), "outputs", "handoff", uniqueId("sess"));
  await mkdir(folder, { recursive: true });
  const file = path.join(folder, "handoff.json");
  const first = { thread: key, summary: "first", next_action: "step one", open_risks: [], changed_files: [], commands_run: [], failed_attempts: [], verdict_pointer: "v.json" };
  await writeFile(file, JSON.stringify(first));
  await expect.poll(async () => (await findThread(request, agentToken, key))?.versions.length ?? 0, { timeout: 10_000 }).toBe(1);
  await page.goto(`/threads/${encodeURIComponent(key)}`);
  await expect(page.getByRole("button", { name: /^Approve / })).toBeEnabled();

  // The agent writes its next packet; the person approves the first one before Baton has seen it.
  const next = { ...first, summary: "second", next_action: "step two" };
  await page.route("**/api/v1/stream**", (route) => route.abort());
  await writeFile(file, JSON.stringify(next));
  await page.getByRole("button", { name: /^Approve / }).click();

  await expect.poll(async () => (await findThread(request, agentToken, key))?.versions.length ?? 0, { timeout: 10_000 }).toBe(2);
  const detail = (await findThread(request, agentToken, key))!;
  expect(detail.active_packet.next_action).toBe("step two");
  // Whatever happened first, the agent's newer packet is what the file holds.
  const onDisk = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
  expect(onDisk.summary).toBe("second");
});
