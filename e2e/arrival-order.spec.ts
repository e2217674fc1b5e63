import { execFile } from "node:child_process";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import type { APIRequestContext, Locator } from "@playwright/test";
import { expect, test } from "./support/fixtures";
import { getJson, packetFor, postPacket, storePacket, threadPath, uniqueId, type PacketDto, type ThreadDetailDto } from "./support/api";
import { card, getBoard } from "./support/board";
import { adminApi, fromPage } from "./support/people";
import { FLAG_TITLES, type FlagCode } from "../lib/contract/lint";

/**
 * Any arrival order (decisions 050, 051, 052), against the running app: the same packet
 * reaches Baton over HTTP and through the watched folder, in four orders. In each, a
 * person's approval is written back into the file, the failing verdict is read, and the
 * board, the thread page and the APIs show the same flags. (The real `baton generate --push`
 * is run in lib/ingest/arrival-order.test.ts; here the fourth order is what it does: the
 * file is written in the watched folder and pushed at once.)
 */

const run = promisify(execFile);
const TIMEOUT_MS = 15_000;
const ORDERS = ["HTTP first", "file first", "baton push first", "written and pushed at once"] as const;

async function push(baseURL: string, token: string, file: string): Promise<string> {
  const { stdout } = await run("node", ["bin/baton.js", "push", file], { env: { ...process.env, BATON_URL: baseURL, BATON_TOKEN: token }, timeout: 60_000 });
  return stdout.trim();
}

/** A workspace with a failing verification report and the packet's file; returns the file. */
async function workspace(root: string, packet: Record<string, unknown>): Promise<string> {
  await mkdir(path.join(root, "outputs", "verification"), { recursive: true });
  await writeFile(path.join(root, "outputs", "verification", "T-1.json"), JSON.stringify({ passed: false, findings: ["the rounding test is red"] }));
  const file = path.join(root, "outputs", "handoff", "sess-1", "handoff.json");
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(packet, null, 2)}\n`);
  return file;
}

async function threadFlags(request: APIRequestContext, token: string, key: string): Promise<FlagCode[]> {
  const thread = await getJson<ThreadDetailDto | { error: unknown }>(request, token, threadPath(key)).catch(() => null);
  return thread && "active_packet" in thread ? thread.active_packet.flags.map((flag) => flag.code) : [];
}

async function itemTexts(list: Locator): Promise<string[]> {
  return (await list.getByRole("listitem").allTextContents()).map((text) => text.trim());
}

for (const order of ORDERS) {
  test(`${order}: the decision is written back, the verdict read, and every view shows the same flags`, async ({ page, request, agentToken, watchDir, baseURL }) => {
    const key = uniqueId(`arrival-${order.split(" ")[0]}`);
    const packet = packetFor(key, { open_risks: [], next_action: `fix rounding for ${key}` });
    const staging = path.join(path.dirname(watchDir), `staging-${key}`);
    const placed = path.join(watchDir, `ws-${key}`);
    const file = path.join(placed, "outputs", "handoff", "sess-1", "handoff.json");
    const watchedFileArrives = async () => {
      await rename(staging, placed);
      await expect.poll(async () => (await getJson<PacketDto>(request, agentToken, `/api/v1/packets/${await activeId()}`)).source_path, { timeout: TIMEOUT_MS }).toBe(file);
    };
    const activeId = async () => (await getJson<ThreadDetailDto>(request, agentToken, threadPath(key))).active_packet.id;

    if (order === "file first") {
      await workspace(placed, packet);
      await expect.poll(() => threadFlags(request, agentToken, key), { timeout: TIMEOUT_MS }).toContain("verdict_failed");
    } else if (order === "written and pushed at once") {
      await push(baseURL!, agentToken, await workspace(placed, packet));
    } else {
      const staged = await workspace(staging, packet);
      if (order === "HTTP first") await storePacket(request, agentToken, packet);
      else {
        expect(await push(baseURL!, agentToken, staged)).toMatch(/ flags=\S*verdict_failed\S* flags_at=\S+ reports=1$/);
        // Before any file is known, the thread page shows the report that travelled with the packet.
        await page.goto(`/threads/${encodeURIComponent(key)}`);
        const pointer = page.getByRole("region", { name: "Verdict" }).getByTestId("verdict-pointer");
        await expect(pointer).toHaveAttribute("data-from", "attached");
        await expect(pointer).toContainText("sent with the packet");
      }
    }

    // A person approves whatever has arrived so far.
    const admin = await adminApi(baseURL!);
    const id = await activeId();
    const approved = await admin.post(threadPath(key, "/decision"), { headers: fromPage(baseURL!), data: { kind: "approved", packet_id: id, base_revision: 0 } });
    expect(approved.status()).toBe(200);
    await admin.dispose();

    // Then the other way of arriving.
    if (order === "HTTP first" || order === "baton push first") await watchedFileArrives();
    else if (order === "file first") expect((await postPacket(request, agentToken, packet)).status()).toBe(200);
    else await expect.poll(async () => (await getJson<PacketDto>(request, agentToken, `/api/v1/packets/${id}`)).source_path, { timeout: TIMEOUT_MS }).toBe(file);

    await expect
      .poll(async () => (JSON.parse(await readFile(file, "utf8")) as { human?: { decision?: { kind?: string } } }).human?.decision?.kind, { timeout: TIMEOUT_MS })
      .toBe("approved");

    // Every view: the APIs, then the board and the thread page in the browser.
    const answer = (await (await postPacket(request, agentToken, packet)).json()) as { flags: { code: FlagCode }[]; flags_computed_at: string };
    expect(Object.keys(answer).sort()).toEqual(["active", "duplicate", "flags", "flags_computed_at", "packet_id", "thread_key"]);
    const answered = answer.flags.map((flag) => flag.code);
    expect(answered).toContain("verdict_failed");
    const board = await getBoard(request, agentToken, { q: key });
    const boardCard = board.columns.flatMap((column) => column.cards).find((item) => item.key === key)!;
    expect(boardCard.verdict.state).toBe("fail");
    expect(boardCard.active_packet.flags.map((flag) => flag.code)).toEqual(answered);
    expect(await threadFlags(request, agentToken, key)).toEqual(answered);
    expect((await getJson<PacketDto>(request, agentToken, `/api/v1/packets/${id}`)).flags.map((flag) => flag.code)).toEqual(answered);
    expect(await push(baseURL!, agentToken, file)).toContain(` flags=${answered.join(",")} `);

    const titles = answered.map((code) => FLAG_TITLES[code]);
    await page.goto(`/?q=${encodeURIComponent(key)}`);
    // The card names every flag, in the same order: approved, it has no reasons to show, so its
    // quiet line lists them (a card in Needs you names those that need a person as its reasons).
    const named = card(page, key).locator("[data-flag]");
    await expect(named).toHaveCount(answered.length);
    expect(await named.evaluateAll((items) => items.map((item) => item.getAttribute("data-flag")))).toEqual(answered);
    await page.goto(`/threads/${encodeURIComponent(key)}`);
    const onPage = page.getByRole("region", { name: "Flags" }).getByRole("list");
    await expect(onPage.getByRole("listitem")).toHaveCount(titles.length);
    const pageTexts = await itemTexts(onPage);
    titles.forEach((title, index) => expect(pageTexts[index]).toMatch(new RegExp(`^${title}`)));
  });
}
