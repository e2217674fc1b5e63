import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { loadBoard } from "../board/board";
import { parseInput } from "../core/parse-input";
import { database } from "../db/client";
import { describeLedgerEvent } from "../events/describe";
import { ingestPacket } from "../ingest/ingest";
import { resetConfig } from "../server/config";
import { threadFiltersSchema } from "../views/threads/filters";
import { expectBatonError } from "@/testing/expect-baton-error";
import { githubHeaders, gitlabHeaders, integrationFixture } from "@/testing/integrations";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { createFirstAdmin } from "../auth/users";
import { decide } from "../human/actions";
import { getMergedHandoff } from "../views/threads/packet-reads";
import { createIntegration, listIntegrations } from "./integrations";
import { POST as postGithub } from "@/app/api/v1/integrations/github/route";
import { receiveDelivery } from "./receive";

freshDatabaseForThisFile();

const NOW = Date.UTC(2026, 11, 1, 12, 0, 0);
const at = (minutes: number) => new Date(NOW + minutes * 60_000);

let repositories = 0;
/** A packet on `branch` of a repository of its own, and an integration for each host. */
async function setUp(branch = "feat/x") {
  const repository = `acme/app-${++repositories}`;
  const thread = `${repository}/${branch}`;
  await ingestPacket({ thread, project: repository, branch, summary: "s", next_action: "n", verdict: { passed: true } }, { kind: "http", actor: "test" }, at(-30));
  const github = await createIntegration("ada", { name: "GitHub", host: "github" });
  const gitlab = await createIntegration("ada", { name: "GitLab", host: "gitlab" });
  return { repository, branch, thread, github, gitlab };
}

type Setup = Awaited<ReturnType<typeof setUp>>;

function sendGithub(setup: Setup, fixture: string, options: { deliveryId?: string; secret?: string; now?: Date; atMs?: number } = {}) {
  const event = fixture.split(".")[0]!;
  const body = JSON.stringify(integrationFixture(`github/${fixture}`, { repository: setup.repository, branch: setup.branch, atMs: options.atMs ?? NOW - 20 * 60_000 }));
  return receiveDelivery({
    host: "github",
    integrationId: setup.github.integration.id,
    headers: new Headers(githubHeaders(options.secret ?? setup.github.secret, event, body, options.deliveryId)),
    body: Buffer.from(body),
    now: options.now ?? new Date(NOW),
  });
}

function sendGitlab(setup: Setup, fixture: string, event: string) {
  const body = JSON.stringify(integrationFixture(`gitlab/${fixture}`, { repository: setup.repository, branch: setup.branch, atMs: NOW - 20 * 60_000 }));
  return receiveDelivery({
    host: "gitlab",
    integrationId: setup.gitlab.integration.id,
    headers: new Headers(gitlabHeaders(setup.gitlab.secret, event)),
    body: Buffer.from(body),
    now: new Date(NOW),
  });
}

async function card(thread: string) {
  const board = await loadBoard(parseInput(threadFiltersSchema, {}, "query"), { now: NOW, keys: [thread] });
  return board.columns.flatMap((column) => column.cards)[0];
}

async function eventsOf(thread: string) {
  const rows = await (await database()).ledgerEvent.findMany({ where: { threadKey: thread, kind: { startsWith: "code_host_" } }, orderBy: { seq: "asc" } });
  return rows.map((row) => row.kind);
}

describe("code host deliveries", () => {
  it("refuses a wrong signature and stores nothing; an unknown integration answers the same", async () => {
    const setup = await setUp();
    const before = await (await database()).integrationDelivery.count();
    await expectBatonError(sendGithub(setup, "check_run.failed", { secret: "not-the-secret" }), "unauthenticated");
    await expectBatonError(
      receiveDelivery({ host: "gitlab", integrationId: setup.gitlab.integration.id, headers: new Headers(gitlabHeaders("wrong", "Pipeline Hook")), body: Buffer.from("{}"), now: new Date(NOW) }),
      "unauthenticated",
    );
    await expectBatonError(
      receiveDelivery({ host: "github", integrationId: setup.gitlab.integration.id, headers: new Headers(githubHeaders(setup.gitlab.secret, "ping", "{}")), body: Buffer.from("{}"), now: new Date(NOW) }),
      "unauthenticated",
    );
    expect(await (await database()).integrationDelivery.count()).toBe(before);
    expect(await eventsOf(setup.thread)).toEqual([]);
    expect((await card(setup.thread))!.column).toBe("ready");
  });

  it("a failed check puts the card in Needs you with the check's name; a passing re-run takes it out", async () => {
    const setup = await setUp();
    expect(await sendGithub(setup, "check_run.failed")).toEqual({ outcome: "applied", threads: [setup.thread] });
    const failing = (await card(setup.thread))!;
    expect(failing.column).toBe("needs_you");
    expect(failing.work?.ci).toMatchObject({ state: "failing", check: "unit tests", url: "https://github.com/acme/app/runs/7700001" });
    expect(failing.active_packet.flags.find((flag) => flag.code === "ci_failing")?.reason).toBe('CI failing: "unit tests" failed.');
    // The same check passing later (a re-run on the same commit) replaces the failure.
    const passedLater = integrationFixture("github/check_run.failed", { repository: setup.repository, branch: setup.branch, atMs: NOW - 5 * 60_000 });
    (passedLater.check_run as Record<string, unknown>).conclusion = "success";
    const body = JSON.stringify(passedLater);
    await receiveDelivery({ host: "github", integrationId: setup.github.integration.id, headers: new Headers(githubHeaders(setup.github.secret, "check_run", body)), body: Buffer.from(body), now: new Date(NOW) });
    const passing = (await card(setup.thread))!;
    expect(passing.work?.ci).toMatchObject({ state: "passing", check: null });
    expect(passing.column).toBe("ready");
    expect(await eventsOf(setup.thread)).toEqual(["code_host_ci", "code_host_ci"]);
    const first = await (await database()).ledgerEvent.findFirstOrThrow({ where: { threadKey: setup.thread, kind: "code_host_ci" }, orderBy: { seq: "asc" } });
    expect(describeLedgerEvent({ kind: "code_host_ci", data: JSON.parse(first.data) as Record<string, unknown> })).toBe("CI failing: unit tests");
  });

  it("a replayed delivery id changes nothing; a body older than the window is refused as a replay", async () => {
    const setup = await setUp();
    const deliveryId = randomUUID();
    expect((await sendGithub(setup, "pull_request_review.changes_requested", { deliveryId })).outcome).toBe("applied");
    expect(await sendGithub(setup, "pull_request_review.approved", { deliveryId })).toEqual({ outcome: "duplicate", threads: [] });
    expect((await card(setup.thread))!.work?.review).toMatchObject({ state: "changes_requested", reviewer: "rosa" });
    expect(await eventsOf(setup.thread)).toEqual(["code_host_review"]);

    // 61 minutes old with the default 60-minute window; 59 minutes passes.
    await expectBatonError(sendGithub(setup, "check_run.failed", { atMs: NOW - 65 * 60_000 }), "conflict");
    expect(await eventsOf(setup.thread)).toEqual(["code_host_review"]);
    expect((await sendGithub(setup, "check_run.failed", { atMs: NOW - 63 * 60_000 })).outcome).toBe("applied");
  });

  it("changes requested puts the card in Needs you quoting the review; an approval by the same reviewer clears it", async () => {
    const setup = await setUp();
    await sendGithub(setup, "pull_request_review.changes_requested");
    const asked = (await card(setup.thread))!;
    expect(asked.column).toBe("needs_you");
    expect(asked.active_packet.flags.find((flag) => flag.code === "changes_requested")?.reason).toBe(
      'rosa requested changes: "The export drops the last row when the page is full; please page it."',
    );
    await sendGithub(setup, "pull_request_review.approved");
    const approved = (await card(setup.thread))!;
    expect(approved.work?.review).toMatchObject({ state: "approved", reviewer: "rosa" });
    expect(approved.column).toBe("ready");
  });

  it("an older report never replaces a newer one (deliveries out of order)", async () => {
    const setup = await setUp();
    await sendGithub(setup, "pull_request.merged");
    await sendGithub(setup, "pull_request.opened");
    expect((await card(setup.thread))!.work?.pull_request).toMatchObject({ state: "merged", number: 12, url: "https://github.com/acme/app/pull/12" });
  });

  it("keeps a delivery for no active thread as unmatched, listed for the admin", async () => {
    const setup = await setUp();
    const other = { ...setup, branch: "feat/nobody" };
    const deliveryId = randomUUID();
    expect(await sendGithub(other, "check_run.failed", { deliveryId })).toEqual({ outcome: "unmatched", threads: [] });
    const { unmatched } = await listIntegrations();
    expect(unmatched.find((delivery) => delivery.delivery_id === deliveryId)).toMatchObject({ event: "ci", repository: setup.repository, branch: "feat/nobody" });
    expect(await sendGithub(setup, "ping")).toEqual({ outcome: "ignored", threads: [] });
  });

  it("reads GitLab's pipeline, merge request and approval hooks", async () => {
    const setup = await setUp();
    await sendGitlab(setup, "merge_request.opened", "Merge Request Hook");
    await sendGitlab(setup, "pipeline.failed", "Pipeline Hook");
    await sendGitlab(setup, "merge_request.changes_requested", "Merge Request Hook");
    const failing = (await card(setup.thread))!;
    expect(failing.work).toMatchObject({
      pull_request: { number: 12, state: "open" },
      ci: { state: "failing", check: "unit tests", url: "https://gitlab.example/acme/app/-/pipelines/5501" },
      review: { state: "changes_requested", reviewer: "rosa" },
    });
    expect(failing.column).toBe("needs_you");
    await sendGitlab(setup, "merge_request.approved", "Merge Request Hook");
    expect((await card(setup.thread))!.work?.review).toMatchObject({ state: "approved" });
  });

  it("a merged pull request archives its threads when BATON_ARCHIVE_ON_MERGE is set", async () => {
    const setup = await setUp();
    process.env.BATON_ARCHIVE_ON_MERGE = "1";
    resetConfig();
    try {
      await sendGithub(setup, "pull_request.merged");
    } finally {
      delete process.env.BATON_ARCHIVE_ON_MERGE;
      resetConfig();
    }
    const thread = await (await database()).thread.findUniqueOrThrow({ where: { key: setup.thread } });
    expect(thread.archived).toBe(true);
    expect(await card(setup.thread)).toBeUndefined();
  });

  it("the merged handoff carries the failing check and the review, beside an intervention quoting them", async () => {
    const setup = await setUp();
    await sendGithub(setup, "check_run.failed");
    await sendGithub(setup, "pull_request_review.changes_requested");
    const pulled = await getMergedHandoff(setup.thread);
    expect(pulled.body.ci).toMatchObject({ state: "failing", check: "unit tests", url: "https://github.com/acme/app/runs/7700001" });
    expect(pulled.body.review).toMatchObject({ state: "changes_requested", reviewer: "rosa", comment: "The export drops the last row when the page is full; please page it." });

    // Waking `baton wait` on the intervention is the waiting read's own (lib/human/wait.test.ts; e2e/integrations.spec.ts end to end).
    const person = await createFirstAdmin({ username: "tess", password: "a long enough password" });
    const question = `CI failing: "unit tests" failed. Fix it first.`;
    await decide(person, setup.thread, { kind: "intervened", packet_id: pulled.packetId, base_revision: 0, question });
    const after = await getMergedHandoff(setup.thread);
    expect((after.body.human as { questions: { text: string }[] }).questions.map((item) => item.text)).toEqual([question]);
    expect(after.body.ci).toMatchObject({ check: "unit tests" });
  });

  it("over HTTP: the route reads the raw body, answers 401 for a bad signature and 400 without the integration's id", async () => {
    const setup = await setUp();
    const body = JSON.stringify(integrationFixture("github/check_run.failed", { repository: setup.repository, branch: setup.branch, atMs: Date.now() - 10 * 60_000 }));
    const post = (query: string, headers: Record<string, string>) => postGithub(new Request(`http://localhost/api/v1/integrations/github${query}`, { method: "POST", headers, body }));
    const query = `?integration=${setup.github.integration.id}`;
    const forged = await post(query, githubHeaders("wrong", "check_run", body));
    expect(forged.status).toBe(401);
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe("unauthenticated");
    expect((await post("", githubHeaders(setup.github.secret, "check_run", body))).status).toBe(400);
    const applied = await post(query, githubHeaders(setup.github.secret, "check_run", body));
    expect(applied.status).toBe(200);
    expect(await applied.json()).toEqual({ outcome: "applied", threads: [setup.thread] });
  });
});

