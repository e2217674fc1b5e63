import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Person } from "../../auth/roles";
import { createFirstAdmin } from "../../auth/users";
import { eventsAfter, headSeq } from "@/testing/ledger-deltas";
import { answer } from "../../human/actions";
import { scheduleWriteBack } from "../../human/writeback/write-human-section";
import { ingestPacket } from "../../ingest/ingest";
import { applyInboxDelta } from "../../browser/inbox-delta";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { listOpenQuestions } from "./inbox";
import { computeInboxDelta } from "./inbox-delta";

freshDatabaseForThisFile();

let person: Person;
const threadsUsed: string[] = [];
beforeAll(async () => {
  person = await createFirstAdmin({ username: "inbox-delta-admin", password: "a long enough password" });
});
// Human writes queue a background write-back per thread; let those finish before the database goes.
afterAll(async () => {
  await scheduleWriteBack(threadsUsed);
});

let hour = 0;
async function ingest(thread: string, questions: unknown[], extra: Record<string, unknown> = {}): Promise<string> {
  threadsUsed.push(thread);
  const body = { thread, summary: "s", next_action: "n", created_at: new Date(Date.parse("2026-06-01T08:00:00Z") + ++hour * 3_600_000).toISOString(), questions_for_human: questions, ...extra };
  return (await ingestPacket(body, { kind: "http", actor: "test" })).packet_id;
}



/** Applies what `work` did to the inbox as the browser would: the result, and a fresh load to compare it with. */
async function applied(work: () => Promise<unknown>) {
  const before = await listOpenQuestions();
  const from = await headSeq();
  await work();
  const delta = await computeInboxDelta(await eventsAfter(from));
  return { delta, result: applyInboxDelta(before, delta), fresh: await listOpenQuestions() };
}

describe("computeInboxDelta applied by the browser", () => {
  it("matches a fresh load after a packet asks, a person answers, and a thread is archived", async () => {
    await ingest("q-one", [{ id: "q0", question: "ship the one?", blocking: true }]);
    let step = await applied(() => ingest("q-two", [{ id: "q0", question: "ship the two?", options: ["yes", "no"] }, "and the docs?"]));
    expect(step.result).toEqual(step.fresh);
    expect(step.delta.threads).toEqual(["q-two"]);

    const twoPacket = step.fresh.groups.flatMap((group) => group.items).find((item) => item.thread_key === "q-two")!.packet_id;
    step = await applied(() => answer(person, "q-two", { packet_id: twoPacket, base_revision: 0, answers: [{ question_id: "q0", answer: "yes" }] }));
    expect(step.result).toEqual(step.fresh);
    expect(step.fresh.groups.map((group) => group.question)).not.toContain("ship the two?");

    step = await applied(() => ingest("q-one", [], { status: "archived" }));
    expect(step.result).toEqual(step.fresh);
    expect(step.fresh.groups.map((group) => group.question)).not.toContain("ship the one?");
  });

  it("asks for a refetch when a change touches a question other threads share", async () => {
    await ingest("q-shared-a", ["is staging safe to reset?"]);
    const step = await applied(() => ingest("q-shared-b", ["Is staging SAFE to reset?"]));
    expect(step.result).toBeNull();
    expect(step.fresh.groups.find((group) => group.question === "is staging safe to reset?")!.items).toHaveLength(2);
    expect(applyInboxDelta(step.fresh, { view: "questions", seq: 1, threads: "not a list" })).toBeNull();
  });
});
