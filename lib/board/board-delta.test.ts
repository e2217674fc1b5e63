import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeStreams, expectStreamRefused, openStream, openViewers, readAfter } from "@/testing/view-streams";
import { createApiToken } from "../auth/tokens";
import { createFirstAdmin } from "../auth/users";
import type { Person } from "../auth/roles";
import { eventsAfter, headSeq, readDelta } from "@/testing/ledger-deltas";
import { THREADLESS_KINDS } from "../events/dto";
import { decide } from "../human/actions";
import { ingestPacket } from "../ingest/ingest";
import { applyBoardDelta } from "../browser/board-delta";
import { riskFingerprint } from "../contract/fingerprint";
import { triageRisks } from "../views/risks/triage";
import { threadFiltersSchema, type ThreadFilters } from "../views/threads/filters";
import { useTempDatabase } from "@/testing/temp-database";
import { loadBoard } from "./board";
import { boardDeltasComputed, computeBoardDelta } from "./board-delta";
import { boardDeltaDto, type BoardDto } from "./dto";

let temp: Awaited<ReturnType<typeof useTempDatabase>>;
let token: string;
let person: Person;

beforeAll(async () => {
  temp = await useTempDatabase();
  token = (await createApiToken("viewer", ["packets:read"])).token;
  person = await createFirstAdmin({ username: "delta-admin", password: "a long enough password" });
});
afterAll(async () => {
  await temp.dispose();
});

// Recent enough that no card is stale, a minute apart.
let arrival = Date.now() - 3_600_000;
async function ingest(thread: string, fields: Record<string, unknown> = {}) {
  arrival += 60_000;
  const result = await ingestPacket({ thread, summary: `work on ${thread}`, next_action: `next for ${thread} at ${arrival}`, ...fields }, { kind: "http", actor: "test" }, new Date(arrival));
  return result.packet_id;
}



const filters = (query: Record<string, string> = {}): ThreadFilters => threadFiltersSchema.parse(query);
/** The board as a person compares it: when it and each card's flags were computed aside. */
const shown = (board: BoardDto) => ({
  ...board,
  generated_at: "",
  columns: board.columns.map((column) => ({
    ...column,
    cards: column.cards.map((card) => ({ ...card, active_packet: { ...card.active_packet, flags_computed_at: "" } })),
  })),
});

/** Applies what `work` did to `before` as the browser would, and checks it matches a fresh load. */
async function expectDeltaMatchesFreshLoad(query: Record<string, string>, work: () => Promise<unknown>) {
  const before = await loadBoard(filters(query));
  const from = await headSeq();
  await work();
  const events = await eventsAfter(from);
  expect(events.length).toBeGreaterThan(0);
  const delta = await computeBoardDelta(events, filters(query));
  const applied = applyBoardDelta(before, delta);
  expect(applied).not.toBeNull();
  expect(shown(applied!)).toEqual(shown(await loadBoard(filters(query))));
  return delta;
}

describe("computeBoardDelta applied by the browser", () => {
  it("matches a fresh load after new packets, an approval, a risk acknowledgement and an archive", async () => {
    for (const thread of ["d-a", "d-b", "d-c"]) await ingest(thread);
    await ingest("d-risky", { open_risks: [{ detail: "prod data at risk", severity: "critical" }] });
    expect((await loadBoard(filters())).columns.find((column) => column.id === "needs_you")!.cards.map((card) => card.key)).toContain("d-risky");

    const moved = await expectDeltaMatchesFreshLoad({}, () => ingest("d-a", { next_action: "a brand new next action" }));
    expect(moved.upserts.find((card) => card.key === "d-a")?.active_packet.next_action).toBe("a brand new next action");

    await expectDeltaMatchesFreshLoad({}, async () => {
      const board = await loadBoard(filters());
      const card = board.columns.flatMap((column) => column.cards).find((each) => each.key === "d-b")!;
      await decide(person, "d-b", { kind: "approved", packet_id: card.active_packet.id, base_revision: card.active_packet.human.revision });
    });
    const acknowledged = await expectDeltaMatchesFreshLoad({}, () =>
      triageRisks(person, { action: "acknowledged", targets: [{ thread_key: "d-risky", fingerprint: riskFingerprint("prod data at risk") }] }),
    );
    expect(acknowledged.upserts.map((card) => [card.key, card.column])).toContainEqual(["d-risky", "ready"]);

    const archived = await expectDeltaMatchesFreshLoad({}, () => ingest("d-c", { status: "archived" }));
    expect(archived.removes).toContain("d-c");
  });

  it("keeps a filtered board right: a card that stops matching is removed, one that starts is added", async () => {
    await ingest("f-one", { open_risks: [{ detail: "a high one", severity: "high" }] });
    await ingest("f-two");
    const left = await expectDeltaMatchesFreshLoad({ severity: "high" }, () => ingest("f-one"));
    expect(left.removes).toContain("f-one");
    const joined = await expectDeltaMatchesFreshLoad({ severity: "high" }, () => ingest("f-two", { open_risks: [{ detail: "now high", severity: "high" }] }));
    expect(joined.upserts.map((card) => card.key)).toEqual(["f-two"]);
  });

  it("places the project's and branch's peers too: a new packet can make another card a duplicate topic", async () => {
    const place = { project: "delta-repo", branch: "feature/x", topic: "the same topic" };
    await ingest("p-first", place);
    const delta = await expectDeltaMatchesFreshLoad({}, () => ingest("p-second", place));
    const first = delta.upserts.find((card) => card.key === "p-first");
    expect(first?.active_packet.flags.map((flag) => flag.code)).toContain("duplicate_topic");
  });

  it("changes nothing for events about no card, and asks for a refetch it cannot tell as cards", async () => {
    const from = await headSeq();
    await createApiToken("another", ["packets:read"]);
    const events = await eventsAfter(from);
    expect(events.map((event) => event.kind)).toEqual(["token_created"]);
    expect(await computeBoardDelta(events, filters())).toMatchObject({ upserts: [], removes: [], refetch: false });
    // Every kind that is never about a thread, integrations' too, changes no card.
    for (const kind of THREADLESS_KINDS) {
      expect(await computeBoardDelta([{ ...events[0]!, kind }], filters()), kind).toMatchObject({ upserts: [], removes: [], refetch: false });
    }
    const unknown = { ...events[0]!, kind: "thread_stale" as const, thread_key: null };
    expect(await computeBoardDelta([unknown], filters())).toMatchObject({ refetch: true });
    const board = await loadBoard(filters());
    expect(applyBoardDelta(board, { ...(await computeBoardDelta([unknown], filters())) })).toBeNull();
    expect(applyBoardDelta(board, { view: "board", seq: 1, upserts: "not cards" })).toBeNull();
    // A partial first paint's counts include cards it does not hold: it is fetched whole instead.
    const moved = await expectDeltaMatchesFreshLoad({}, () => ingest("d-a", { next_action: "once more" }));
    expect(applyBoardDelta({ ...board, complete: false }, moved)).toBeNull();
  });
});


/** The first board delta on a stream that upserts `thread`'s card, with the bytes read by then. */
const deltaFor = (response: Response, thread: string) =>
  readDelta(response, (data) => {
    const delta = boardDeltaDto.parse(data);
    return delta.upserts.some((card) => card.key === thread) ? delta : undefined;
  }, thread);

describe("GET /api/v1/stream?board=", () => {
  it("sends every viewer the changed card, computed once for all of them", async () => {
    await ingest("s-live");
    const abort = new AbortController();
    const streams = await openViewers(token, "?board=", 3, abort.signal);
    const plain = await openStream(token, "", abort.signal);
    try {
      const computedBefore = boardDeltasComputed();
      const deltas = await readAfter(streams, (response) => deltaFor(response, "s-live"), () => ingest("s-live", { next_action: "seen live by all three" }));
      for (const { delta } of deltas) {
        expect(delta.upserts.find((card) => card.key === "s-live")!.active_packet.next_action).toBe("seen live by all three");
      }
      expect(boardDeltasComputed() - computedBefore).toBe(1);
      // A stream that did not ask gets ledger events only.
      const text = await Promise.race([plain.body!.getReader().read(), new Promise((resolve) => setTimeout(() => resolve(null), 200))]);
      expect(new TextDecoder().decode((text as { value?: Uint8Array } | null)?.value ?? new Uint8Array())).not.toContain("event: delta");
    } finally {
      await closeStreams(abort, [...streams, plain]);
    }
  });

  it("refuses filters it does not accept, naming the field", async () => {
    const abort = new AbortController();
    const response = await openStream(token, `?board=${encodeURIComponent("severity=urgent")}`, abort.signal);
    await expectStreamRefused(response, "board.severity");
  });
});
