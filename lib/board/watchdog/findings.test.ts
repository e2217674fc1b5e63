import { describe, expect, it } from "vitest";
import { loadBoard } from "../board";
import { database } from "../../db/client";
import { ingestPacket } from "../../ingest/ingest";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { threadFiltersSchema } from "../../views/threads/filters";
import { COMMIT_HISTORY_WINDOW, findCommitRegression, type VersionCommit } from "./commit-history";
import { processSlot } from "../../core/singleton";
import { countStatements } from "@/testing/count-statements";
import { testsRunOnPostgresql } from "@/testing/postgresql";
import { findDuplicateTopics, findWatchdogFindings, recordWatchdogFindings, type ActiveThreadRow } from "./findings";

freshDatabaseForThisFile();

const MINUTE = 60_000;

describe("findCommitRegression", () => {
  const T0 = Date.parse("2026-11-29T06:00:00Z");
  /** Versions v0, v1, ... reported in this order, with these commits; the last one is active. */
  const history = (...commits: (string | null)[]): VersionCommit[] =>
    commits.map((commit, index) => ({ id: `v${index}`, sortAt: new Date(T0 + index * MINUTE), receivedAt: new Date(T0 + index * MINUTE), arrivalSeq: index + 1, commit }));
  const activeOf = (versions: VersionCommit[]) => versions.at(-1)!.id;
  const regression = (...commits: (string | null)[]) => {
    const versions = history(...commits);
    return findCommitRegression(versions, activeOf(versions));
  };

  it.each([
    ["a commit that moved forward", ["a", "b"], null],
    ["the same commit again", ["a", "a", "a"], null],
    ["a first packet", ["a"], null],
    ["an active packet without a commit", ["a", "b", null], null],
    ["a commit that came back after another", ["a", "b", "a"], { commit: "a", newer: "b", newerVersionId: "v1" }],
    ["the newest of the commits since", ["a", "b", "c", "a"], { commit: "a", newer: "c", newerVersionId: "v2" }],
    ["an earlier regression the active packet stays on", ["a", "b", "a", "a"], { commit: "a", newer: "b", newerVersionId: "v1" }],
    ["versions that reported no commit in between", ["a", null, "a"], null],
    ["a commit that only repeats the one before", ["b", "a", "a"], null],
  ])("%s", (_name, commits, expected) => {
    expect(regression(...commits)).toEqual(expected);
  });

  it("orders the versions by their ordering key, not by the order given", () => {
    const versions = history("a", "b", "a");
    expect(findCommitRegression([versions[2]!, versions[0]!, versions[1]!], "v2")).toMatchObject({ commit: "a", newer: "b" });
    // Versions after the active one (cannot happen through ingest) do not count.
    expect(findCommitRegression(versions, "v1")).toBeNull();
  });
});

describe("findDuplicateTopics", () => {
  let serial = 0;
  const row = (extra: Partial<ActiveThreadRow>): ActiveThreadRow => {
    serial += 1;
    return { id: `th${serial}`, key: `t${serial}`, project: "acme/web", branch: "main", topic: null, taskId: null, activeVersionId: `pv${serial}`, ...extra };
  };

  it("flags every thread of a project and branch that shares a topic with another", () => {
    const one = row({ key: "one", topic: "checkout" });
    const two = row({ key: "two", topic: "checkout" });
    const three = row({ key: "three", topic: "checkout" });
    const findings = findDuplicateTopics([one, two, three, row({ topic: "billing" })]);
    expect(findings.map((finding) => [finding.threadKey, finding.data.other_threads])).toEqual([
      ["one", ["three", "two"]],
      ["three", ["one", "two"]],
      ["two", ["one", "three"]],
    ]);
    expect(findings[0]).toMatchObject({ code: "duplicate_topic", versionId: one.activeVersionId });
    expect(findings[0]!.reason).toBe('2 other active threads work on the same topic "checkout" on acme/web branch main: three, two.');
  });

  it("flags a shared task_id, and names both when topic and task are shared", () => {
    const findings = findDuplicateTopics([
      row({ key: "a", taskId: "T-1" }),
      row({ key: "b", taskId: "T-1", topic: "x" }),
      row({ key: "c", taskId: "T-2", topic: "y" }),
      row({ key: "d", taskId: "T-2", topic: "y" }),
    ]);
    expect(findings.map((finding) => finding.reason)).toEqual([
      'Another active thread works on the same task "T-1" on acme/web branch main: b.',
      'Another active thread works on the same task "T-1" on acme/web branch main: a.',
      'Another active thread works on the same topic "y" and task "T-2" on acme/web branch main: d.',
      'Another active thread works on the same topic "y" and task "T-2" on acme/web branch main: c.',
    ]);
  });

  it("does not flag other branches, other projects, or threads without project, branch, topic and task", () => {
    expect(
      findDuplicateTopics([
        row({ topic: "x" }),
        row({ topic: "x", branch: "other" }),
        row({ topic: "x", project: "acme/api" }),
        row({ topic: "z", project: null }),
        row({ topic: "z", project: null }),
        row({ topic: "w", branch: null }),
        row({ topic: "w", branch: null }),
        row({}),
        row({}),
      ]),
    ).toEqual([]);
  });
});

const http = { kind: "http", actor: "test" } as const;

/** Ingests a clean packet; `minutesAgo` sets its created_at (the order of a thread's versions). */
async function send(body: Record<string, unknown>, minutesAgo: number): Promise<string> {
  const created = new Date(Date.now() - minutesAgo * MINUTE).toISOString();
  const result = await ingestPacket({ summary: `packet ${created}`, next_action: "continue", created_at: created, ...body }, http);
  return result.packet_id;
}

/** Sends `thread` packets whose last known good commits are these, each `[commit, minutes ago]`, in order; their packet ids. */
async function sendCommits(thread: string, ...packets: [commit: string, minutesAgo: number][]): Promise<string[]> {
  const ids: string[] = [];
  for (const [commit, minutesAgo] of packets) ids.push(await send({ thread, last_known_good_commit: commit }, minutesAgo));
  return ids;
}

async function cardOf(key: string) {
  const board = await loadBoard(threadFiltersSchema.parse({}));
  for (const column of board.columns) {
    const card = column.cards.find((candidate) => candidate.key === key);
    if (card) return { column: column.id, flags: card.active_packet.flags.filter((flag) => flag.code === "duplicate_topic" || flag.code === "commit_regressed") };
  }
  throw new Error(`no card for ${key}`);
}

async function watchdogEvents(key: string) {
  const rows = await (await database()).ledgerEvent.findMany({
    where: { threadKey: key, kind: { in: ["watchdog_duplicate_topic", "watchdog_commit_regressed"] } },
    orderBy: { seq: "asc" },
  });
  return rows.map((row) => ({ kind: row.kind, versionId: row.versionId, actor: row.actor, data: JSON.parse(row.data) as Record<string, unknown> }));
}

describe("watchdog findings on the board and in the ledger", () => {
  it("two active threads on one branch with the same topic: both cards flagged, in Needs you", async () => {
    const project = "acme/dup-board";
    await send({ thread: "dup/first", project, branch: "feat/x", topic: "refunds" }, 10);
    expect((await cardOf("dup/first")).flags).toEqual([]);
    await send({ thread: "dup/second", project, branch: "feat/x", topic: "refunds" }, 5);
    for (const [key, other] of [["dup/first", "dup/second"], ["dup/second", "dup/first"]] as const) {
      const card = await cardOf(key);
      expect(card.column).toBe("needs_you");
      expect(card.flags).toEqual([{ code: "duplicate_topic", reason: expect.stringContaining(other) as unknown }]);
    }
    const filtered = await loadBoard(threadFiltersSchema.parse({ flag: "duplicate_topic", project }));
    expect(filtered.total).toBe(2);

    // The second moves to another topic: neither is flagged any more.
    await send({ thread: "dup/second", project, branch: "feat/x", topic: "payouts" }, 1);
    expect((await cardOf("dup/first")).flags).toEqual([]);
    expect((await cardOf("dup/second")).flags).toEqual([]);
  });

  it("an active packet whose last known good commit went back is flagged until a newer commit arrives", async () => {
    const thread = "regress/board";
    await sendCommits(thread, ["c1", 30], ["c2", 20]);
    expect((await cardOf(thread)).flags).toEqual([]);
    await sendCommits(thread, ["c1", 10]);
    const card = await cardOf(thread);
    expect(card.column).toBe("needs_you");
    expect(card.flags).toEqual([{ code: "commit_regressed", reason: expect.stringMatching(/c1 is older than c2/) as unknown }]);
    await sendCommits(thread, ["c3", 5]);
    expect((await cardOf(thread)).flags).toEqual([]);
  });

  it("a late packet that belongs before the active one is taken into account", async () => {
    const thread = "regress/late";
    await sendCommits(thread, ["c1", 30], ["c1", 10]);
    expect((await cardOf(thread)).flags).toEqual([]);
    // Produced between the two, delivered last: c1, c2, c1 in the thread's order.
    await sendCommits(thread, ["c2", 20]);
    expect((await cardOf(thread)).flags.map((flag) => flag.code)).toEqual(["commit_regressed"]);
  });

  it("the scheduled check records each finding once per active version", async () => {
    const project = "acme/dup-ledger";
    const first = await send({ thread: "ledger/first", project, branch: "main", task_id: "T-9" }, 10);
    const second = await send({ thread: "ledger/second", project, branch: "main", task_id: "T-9" }, 9);
    const regressed = await sendCommits("ledger/regressed", ["a", 30], ["b", 20], ["a", 10]);

    const recorded = await recordWatchdogFindings();
    expect(recorded.map((finding) => finding.threadKey).filter((key) => key.startsWith("ledger/")).sort()).toEqual([
      "ledger/first",
      "ledger/regressed",
      "ledger/second",
    ]);
    expect(await watchdogEvents("ledger/first")).toEqual([
      {
        kind: "watchdog_duplicate_topic",
        versionId: first,
        actor: "watchdog",
        data: { project, branch: "main", topic: null, task_id: "T-9", other_threads: ["ledger/second"], reason: expect.any(String) as unknown },
      },
    ]);
    expect(await watchdogEvents("ledger/regressed")).toEqual([
      {
        kind: "watchdog_commit_regressed",
        versionId: regressed[2],
        actor: "watchdog",
        data: { commit: "a", newer_commit: "b", newer_packet_id: regressed[1], reason: expect.any(String) as unknown },
      },
    ]);

    // Again, twice at once: nothing new.
    const again = await Promise.all([recordWatchdogFindings(), recordWatchdogFindings()]);
    expect(again.flat().filter((finding) => finding.threadKey.startsWith("ledger/"))).toEqual([]);

    // A newer packet with the same finding is a new finding, recorded once.
    const newer = await send({ thread: "ledger/second", project, branch: "main", task_id: "T-9", summary: "still on T-9" }, 1);
    await Promise.all([recordWatchdogFindings(), recordWatchdogFindings()]);
    expect((await watchdogEvents("ledger/second")).map((event) => event.versionId)).toEqual([second, newer]);
    expect(await watchdogEvents("ledger/first")).toHaveLength(1);
  });

  it("findings name only active threads", async () => {
    const project = "acme/archived";
    await send({ thread: "arch/live", project, branch: "main", topic: "t" }, 10);
    await send({ thread: "arch/gone", project, branch: "main", topic: "t", status: "archived" }, 9);
    const findings = await findWatchdogFindings();
    expect(findings.filter((finding) => finding.threadKey.startsWith("arch/"))).toEqual([]);
  });
});

describe("watchdog findings for some threads, and on a cold cache", () => {
  const forgetCommitHistory = () => (processSlot<unknown>("CommitRegressions").value = undefined);
  const flagsOf = (board: Awaited<ReturnType<typeof loadBoard>>, key: string) =>
    board.columns.flatMap((column) => column.cards).find((card) => card.key === key)?.active_packet.flags;

  it("one thread's findings are the board's, read with its project/branch peers only", async () => {
    const project = "acme/peers";
    await send({ thread: "peers/a", project, branch: "main", topic: "search" }, 10);
    await send({ thread: "peers/b", project, branch: "main", topic: "search" }, 9);
    await send({ thread: "peers/other-branch", project, branch: "dev", topic: "search" }, 8);
    await sendCommits("peers/regressed", ["a", 30], ["b", 20], ["a", 10]);
    const all = await findWatchdogFindings();
    for (const key of ["peers/a", "peers/b", "peers/other-branch", "peers/regressed"]) {
      forgetCommitHistory();
      const some = await findWatchdogFindings([key]);
      expect(some).toEqual(all.filter((finding) => finding.threadKey === key));
      const full = await loadBoard(threadFiltersSchema.parse({}));
      const one = await loadBoard(threadFiltersSchema.parse({}), { keys: [key] });
      expect(flagsOf(one, key)).toEqual(flagsOf(full, key));
    }
    expect((await findWatchdogFindings(["peers/a"])).map((finding) => finding.reason)).toEqual([expect.stringContaining("peers/b")]);
    expect(await findWatchdogFindings(["peers/other-branch", "no/such-thread"])).toEqual([]);
  });

  it("compares only the newest versions of a thread, whatever its history", async () => {
    const thread = "window/long";
    // c1, then more than a window of c2, then c1 again: the first c1 is out of the window.
    await send({ thread, last_known_good_commit: "c1" }, 200);
    for (let n = 0; n < COMMIT_HISTORY_WINDOW + 1; n++) await send({ thread, last_known_good_commit: "c2", summary: `c2 #${n}` }, 100 - n);
    await send({ thread, last_known_good_commit: "c1" }, 1);
    forgetCommitHistory();
    expect((await findWatchdogFindings([thread])).filter((finding) => finding.code === "commit_regressed")).toEqual([]);
    // Within the window it counts: c2 then c1 again.
    const inside = "window/inside";
    await send({ thread: inside, last_known_good_commit: "c1" }, 50);
    for (let n = 0; n < COMMIT_HISTORY_WINDOW - 2; n++) await send({ thread: inside, last_known_good_commit: "c2", summary: `c2 #${n}` }, 40 - n);
    await send({ thread: inside, last_known_good_commit: "c1" }, 1);
    forgetCommitHistory();
    expect((await findWatchdogFindings([inside])).map((finding) => finding.code)).toEqual(["commit_regressed"]);
  });

  // Statements are counted on SQLite's connections (testing/count-statements.ts).
  it.skipIf(testsRunOnPostgresql())("a board load on a cold cache runs as many statements with 5 threads more", async () => {
    const coldLoad = async () => {
      forgetCommitHistory();
      const counter = countStatements();
      try {
        await loadBoard(threadFiltersSchema.parse({}));
        return counter.count();
      } finally {
        counter.stop();
      }
    };
    await coldLoad(); // the verdict cache, warmed for the threads so far
    const before = await coldLoad();
    for (let n = 0; n < 5; n++) await send({ thread: `cold/${n}`, last_known_good_commit: `c${n}` }, 5);
    await loadBoard(threadFiltersSchema.parse({}));
    expect(await coldLoad()).toBe(before);
  });
});
