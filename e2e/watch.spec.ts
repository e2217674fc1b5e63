import { mkdir, open, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { expect, test } from "./support/fixtures";
import { findThread, getJson, packetFor, uniqueId, type PacketDto, type ThreadDetailDto } from "./support/api";

/** The watched folder: handoff.json files written below it arrive through the same ingest path. */

const INGEST_TIMEOUT_MS = 10_000;

/** Where the workbench generator writes: <workspace>/outputs/handoff/<session>/handoff.json. */
async function handoffPath(watchDir: string, workspace: string, session: string): Promise<string> {
  const folder = path.join(watchDir, workspace, "outputs", "handoff", session);
  await mkdir(folder, { recursive: true });
  return path.join(folder, "handoff.json");
}

test("a handoff.json written below the watched folder appears as a thread with source file", async ({ request, agentToken, watchDir }) => {
  const workspace = uniqueId("ws");
  const session = uniqueId("sess");
  const thread = uniqueId("watched");
  const file = await handoffPath(watchDir, workspace, session);
  const packet = packetFor(thread, { session_id: session, timestamp: Date.now() / 1000 });
  await writeFile(file, JSON.stringify(packet, null, 2));

  await expect
    .poll(async () => (await findThread(request, agentToken, thread))?.versions.length ?? 0, { timeout: INGEST_TIMEOUT_MS })
    .toBe(1);
  const detail = (await findThread(request, agentToken, thread))!;
  expect(detail.versions[0]).toMatchObject({ active: true, source: "file", next_action: packet.next_action });
  const stored = await getJson<PacketDto>(request, agentToken, `/api/v1/packets/${detail.active_packet.id}`);
  expect(stored).toMatchObject({ source: "file", source_path: file, workspace_root: path.join(watchDir, workspace) });
  expect(stored.received).toEqual(packet);
});

test("a file written in two chunks with a pause is ingested once, complete", async ({ request, agentToken, watchDir }) => {
  const thread = uniqueId("two-chunks");
  const file = await handoffPath(watchDir, uniqueId("ws"), uniqueId("sess"));
  const packet = packetFor(thread, { summary: `written slowly: ${"x".repeat(4000)}`, x_tail_marker: "the end" });
  const text = JSON.stringify(packet, null, 2);
  const half = Math.floor(text.length / 2);

  const handle = await open(file, "w");
  try {
    await handle.write(text.slice(0, half));
    await handle.sync();
    // Longer than the watcher's 200 ms "size settled" wait: the half file is seen, and must not count.
    await sleep(1_500);
    await handle.write(text.slice(half));
  } finally {
    await handle.close();
  }

  await expect
    .poll(async () => (await findThread(request, agentToken, thread))?.versions.length ?? 0, { timeout: INGEST_TIMEOUT_MS })
    .toBe(1);
  const stored = await getJson<PacketDto>(
    request,
    agentToken,
    `/api/v1/packets/${(await findThread(request, agentToken, thread))!.active_packet.id}`,
  );
  expect(stored.source).toBe("file");
  expect(stored.received).toEqual(packet);
  // Whatever events the two writes caused, there is still one version a moment later.
  await sleep(1_000);
  expect((await findThread(request, agentToken, thread))?.versions).toHaveLength(1);
});

test("rewriting a watched file with the same content adds nothing; changed content adds a version", async ({
  request,
  agentToken,
  watchDir,
}) => {
  const thread = uniqueId("rewritten");
  const file = await handoffPath(watchDir, uniqueId("ws"), uniqueId("sess"));
  const first = packetFor(thread, { next_action: "first step" });
  await writeFile(file, JSON.stringify(first));
  await expect
    .poll(async () => (await findThread(request, agentToken, thread))?.versions.length ?? 0, { timeout: INGEST_TIMEOUT_MS })
    .toBe(1);

  // Same content, laid out differently: one version still.
  await writeFile(file, JSON.stringify(first, null, 4));
  await sleep(1_000);
  expect((await findThread(request, agentToken, thread))?.versions).toHaveLength(1);

  const second = packetFor(thread, { next_action: "second step" });
  await writeFile(file, JSON.stringify(second));
  await expect
    .poll(async () => (await findThread(request, agentToken, thread))?.active_packet.next_action, { timeout: INGEST_TIMEOUT_MS })
    .toBe("second step");
  const detail = (await findThread(request, agentToken, thread)) as ThreadDetailDto;
  expect(detail.versions.map((version) => [version.next_action, version.active, version.source])).toEqual([
    ["second step", true, "file"],
    ["first step", false, "file"],
  ]);
});

test("only handoff files are ingested: handoff.json, not notes.json (Markdown names: lib/ingest/watch/folder-watcher.test.ts)", async ({ request, agentToken, watchDir }) => {
  const folder = path.dirname(await handoffPath(watchDir, uniqueId("ws"), uniqueId("sess")));
  const ignored = uniqueId("not-a-handoff");
  const watched = uniqueId("a-handoff");
  await writeFile(path.join(folder, "notes.json"), JSON.stringify(packetFor(ignored)));
  await writeFile(path.join(folder, "handoff.json"), JSON.stringify(packetFor(watched)));

  await expect.poll(async () => (await findThread(request, agentToken, watched)) !== null, { timeout: INGEST_TIMEOUT_MS }).toBe(true);
  // Both files were written together; the watcher handled handoff.json, and had as long for notes.json.
  await sleep(1_000);
  expect(await findThread(request, agentToken, ignored)).toBeNull();
});

test("a watched file that stays invalid is shown on the first page as an ingest error", async ({ page, watchDir }) => {
  const workspace = uniqueId("ws-bad");
  const file = await handoffPath(watchDir, workspace, uniqueId("sess"));
  // Valid JSON, but no core field: refused at once (no settling wait), recorded in the ledger.
  await writeFile(file, JSON.stringify({ title: "not a packet" }));
  await expect
    .poll(
      async () => {
        await page.goto("/");
        const region = page.getByRole("region", { name: "Files that could not be ingested" });
        // count() does not wait: the region appears only once the watcher has refused the file.
        return (await region.count()) ? region.textContent() : "";
      },
      { timeout: INGEST_TIMEOUT_MS },
    )
    .toContain(file);
  await expect(page.getByRole("region", { name: "Files that could not be ingested" })).toContainText("none of the seven core fields");
});
