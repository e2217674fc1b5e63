import "server-only";
import { loadCardFlags } from "../../board/board";
import type { CardFlagsDto } from "../../board/flags";
import { packetDto, threadDetailDto, threadListDto, type PacketDto, type ThreadDetailDto, type ThreadListDto } from "./dto";
import type { ThreadListQuery } from "./filters";
import { getThreadDetail, listActiveThreads } from "./queries";
import { getPacket } from "./packet-reads";
import { readVersionVerdicts } from "../verdict/version";

/**
 * The thread and packet views with the flags a card shows (lib/board/flags.ts), not only
 * the lint flags stored at ingest: every view says the same as the board
 * (docs/decisions/052-one-source-of-flags.md).
 */

const withCardFlags = <T extends { flags: unknown; flags_computed_at: string }>(item: T, card: CardFlagsDto | undefined): T =>
  card ? { ...item, flags: card.flags, flags_computed_at: card.computed_at } : item;

export async function listThreads(query: ThreadListQuery): Promise<ThreadListDto> {
  const list = await listActiveThreads(query);
  const flags = await loadCardFlags(list.threads.map((thread) => thread.key));
  return threadListDto.parse({
    ...list,
    threads: list.threads.map((thread) => ({ ...thread, active_packet: withCardFlags(thread.active_packet, flags.get(thread.key)) })),
  });
}

/** With `freshVerdict`, the active packet's reports are read again first (the thread page): its flags match what it shows. */
export async function loadThreadDetail(key: string, options: { freshVerdict?: boolean } = {}): Promise<ThreadDetailDto> {
  const detail = await getThreadDetail(key);
  if (options.freshVerdict) await readVersionVerdicts([detail.active_packet.id], { fresh: true });
  const card = (await loadCardFlags([key])).get(key);
  return threadDetailDto.parse({
    ...detail,
    active_packet: withCardFlags(detail.active_packet, card),
    versions: detail.versions.map((version) => (version.active && card ? { ...version, flags: card.flags } : version)),
  });
}

export async function loadPacket(id: string): Promise<PacketDto> {
  const packet = await getPacket(id);
  if (!packet.active) return packet;
  return packetDto.parse(withCardFlags(packet, (await loadCardFlags([packet.thread_key])).get(packet.thread_key)));
}

interface AnsweredPacket {
  thread_key: string;
  active: boolean;
  flags: unknown;
}
type Flagged<T> = T & { flags: CardFlagsDto["flags"]; flags_computed_at: string };

/**
 * An ingest answer (one packet or a batch's results) with each active packet's card flags;
 * a packet stored already superseded keeps its stored lint flags, computed from its content now.
 */
export async function withAnsweredFlags<T extends AnsweredPacket>(answered: readonly T[]): Promise<Flagged<T>[]> {
  const now = new Date().toISOString();
  const cards = await answeredCardFlags(answered.filter((item) => item.active).map((item) => item.thread_key));
  return answered.map((item) => {
    const card = item.active ? cards.get(item.thread_key) : undefined;
    return card ? { ...item, flags: card.flags, flags_computed_at: card.computed_at } : ({ ...item, flags_computed_at: now } as Flagged<T>);
  });
}

/**
 * Ingest answers' card flags, placed together: while one placement runs, the answers that
 * arrive meanwhile wait for the next one, which places all their threads at once (as
 * concurrent packets share a commit, decision 008). Each placement starts after its callers'
 * packets were stored, so it sees them. One placement per answer cost four times the ingest
 * rate of `npm run bench:ingest`.
 */
interface PendingPlacement {
  keys: Set<string>;
  waiters: { resolve: (cards: Map<string, CardFlagsDto>) => void; reject: (error: unknown) => void }[];
}
let placing = false;
let pending: PendingPlacement | null = null;

function answeredCardFlags(keys: readonly string[]): Promise<Map<string, CardFlagsDto>> {
  if (!keys.length) return Promise.resolve(new Map());
  return new Promise((resolve, reject) => {
    pending ??= { keys: new Set(), waiters: [] };
    for (const key of keys) pending.keys.add(key);
    pending.waiters.push({ resolve, reject });
    if (!placing) void placePending();
  });
}

async function placePending(): Promise<void> {
  placing = true;
  while (pending) {
    const batch = pending;
    pending = null;
    try {
      const cards = await loadCardFlags([...batch.keys]);
      for (const waiter of batch.waiters) waiter.resolve(cards);
    } catch (error) {
      for (const waiter of batch.waiters) waiter.reject(error);
    }
  }
  placing = false;
}
