import { beforeAll, describe, expect, it } from "vitest";
import type { Person } from "../auth/roles";
import { createFirstAdmin } from "../auth/users";
import { loadBoard } from "../board/board";
import { ingestPacket } from "../ingest/ingest";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { threadFiltersSchema, threadListQuerySchema } from "../views/threads/filters";
import { listActiveThreads } from "../views/threads/queries";
import { answer, decide } from "./actions";
import { latestHumanSections } from "./latest-revision";

freshDatabaseForThisFile();

let person: Person;
beforeAll(async () => {
  person = await createFirstAdmin({ username: "rev-admin", password: "a long enough password" });
});

describe("latestHumanSections", () => {
  it("the newest revision of each version, and the empty section for versions nobody acted on", async () => {
    const questions = Array.from({ length: 4 }, (_, n) => ({ id: `q${n}`, question: `Question ${n}?` }));
    const many = await ingestPacket({ thread: "rev/many", summary: "s", next_action: "n", questions_for_human: questions }, { kind: "http", actor: "test" });
    const none = await ingestPacket({ thread: "rev/none", summary: "s", next_action: "n" }, { kind: "http", actor: "test" });
    for (let n = 0; n < 4; n++) await answer(person, "rev/many", { packet_id: many.packet_id, base_revision: n, answers: [{ question_id: `q${n}`, answer: `a${n}` }] });
    await decide(person, "rev/many", { kind: "approved", packet_id: many.packet_id, base_revision: 4 });

    const sections = await latestHumanSections([many.packet_id, none.packet_id]);
    expect(sections.get(many.packet_id)).toMatchObject({ revision: 5, decision: { kind: "approved" }, answers: expect.any(Array) as unknown });
    expect(sections.get(many.packet_id)!.answers).toHaveLength(4);
    expect(sections.get(none.packet_id)).toMatchObject({ revision: 0, decision: null });

    // Cards on the board and in the list carry it.
    const board = await loadBoard(threadFiltersSchema.parse({ q: "rev/" }));
    const cards = board.columns.flatMap((column) => column.cards);
    expect(cards.find((card) => card.key === "rev/many")?.active_packet.human).toEqual({ revision: 5, decision: expect.objectContaining({ kind: "approved" }) as unknown, unanswered_questions: 0 });
    expect(cards.find((card) => card.key === "rev/none")?.active_packet.human).toEqual({ revision: 0, decision: null, unanswered_questions: 0 });
    const listed = await listActiveThreads(threadListQuerySchema.parse({ q: "rev/" }));
    expect(listed.threads.find((thread) => thread.key === "rev/many")?.active_packet.human.revision).toBe(5);
  });
});
