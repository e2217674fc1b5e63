import "server-only";
import { holdReader, type ReaderHold, type ReaderIdentity } from "../auth/reader-checks";
import { BatonError } from "../core/errors";
import type { LedgerEventDto, LedgerKind } from "../events/ledger";
import { ledgerFeedReady, subscribeLedger } from "../events/ledger-feed";
import { getMergedHandoff } from "../views/threads/queries";
import type { HumanSection } from "./section";
import { singleton } from "../core/singleton";

/**
 * The waiting read of a thread's merged handoff: one registry of waiters grouped by thread,
 * one ledger-feed subscription, one read per group (docs/decisions/019-waiting-read.md).
 */

export { MAX_WAIT_SECONDS } from "./wait-limit";
/** Waiters one process keeps; past that, 503 with Retry-After. */
export const MAX_WAITERS_PER_PROCESS = 10_000;

/** Ledger kinds after which a thread's merged handoff may read differently. */
export const WAKE_KINDS: ReadonlySet<LedgerKind> = new Set<LedgerKind>([
  "human_approved",
  "human_intervened",
  "human_answered",
  "human_answer_undone",
  "packet_received",
  "packet_superseded",
  "thread_reopened",
]);

export interface MergedHandoff {
  packetId: string;
  body: Record<string, unknown>;
}

export interface WaitRequest {
  threadKey: string;
  /** The human-section revision the caller has seen. */
  after: number;
  /**
   * The active packet the caller has seen. When given and the active packet is
   * another one, that is news at once; when absent, the packet the first read
   * finds stands in for it (so a newer packet arriving during the wait is news).
   */
  afterPacket?: string;
  /** How long to wait for news; 0 only compares. */
  waitMs: number;
  /** The client went away: stop waiting. */
  signal?: AbortSignal;
  /**
   * Who waits (lib/auth/reader-checks.ts): counted against that reader's cap,
   * and the wait ends with 401/403 if the reader loses its access meanwhile.
   */
  reader?: ReaderIdentity;
}

export interface WaitOutcome {
  /** False when the wait ended (or the client left) with nothing new. */
  changed: boolean;
  /** The handoff as last read: the news, or the unchanged current state. */
  handoff: MergedHandoff;
}

/** The human-section revision of a merged handoff. */
export function humanRevisionOf(handoff: MergedHandoff): number {
  return (handoff.body.human as HumanSection).revision;
}

interface Waiter {
  after: number;
  afterPacket: string | undefined;
  /** The handoff this waiter last saw (the first read, or a later group read). */
  latest: MergedHandoff | null;
  /** Past its first read and waiting for news. */
  inWait: boolean;
  settle: (outcome: WaitOutcome | Error) => void;
}

interface ThreadGroup {
  key: string;
  waiters: Set<Waiter>;
  /** A read for this group is running; `again` asks for one more after it. */
  reading: boolean;
  again: boolean;
}

interface Registry {
  groups: Map<string, ThreadGroup>;
  waiters: number;
  /** Waiters past their first read. */
  inWait: number;
  unsubscribe: (() => void) | null;
  /** Reads done for woken groups, since the process started (for tests and the decision record's claim). */
  wakeReads: number;
}

// On globalThis: each route bundle may hold its own copy of this module, and
// the registry (like the ledger feed) must be one per process.
const registry = singleton<Registry>("HandoffWaiters", () => ({ groups: new Map(), waiters: 0, inWait: 0, unsubscribe: null, wakeReads: 0 }));

/** News for a caller who saw revision `after` (of packet `afterPacket`, when known). */
function isNews({ after, afterPacket }: { after: number; afterPacket?: string }, handoff: MergedHandoff): boolean {
  if (afterPacket !== undefined && handoff.packetId !== afterPacket) return true;
  return humanRevisionOf(handoff) > after;
}

/** One read for the group, however many of its waiters there are; reads again if woken meanwhile. */
async function refresh(group: ThreadGroup): Promise<void> {
  if (group.reading) {
    group.again = true;
    return;
  }
  group.reading = true;
  try {
    do {
      group.again = false;
      if (!group.waiters.size) return;
      let handoff: MergedHandoff;
      try {
        registry.wakeReads++;
        handoff = await getMergedHandoff(group.key);
      } catch (error) {
        // The waiters answer with the error; their clients ask again.
        for (const waiter of [...group.waiters]) waiter.settle(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      for (const waiter of [...group.waiters]) {
        waiter.latest = handoff;
        if (isNews(waiter, handoff)) waiter.settle({ changed: true, handoff });
      }
    } while (group.again);
  } finally {
    group.reading = false;
  }
}

function onEvents(events: LedgerEventDto[]): void {
  const woken = new Set<string>();
  for (const event of events) {
    if (event.thread_key !== null && WAKE_KINDS.has(event.kind) && registry.groups.has(event.thread_key)) woken.add(event.thread_key);
  }
  for (const key of woken) void refresh(registry.groups.get(key)!);
}

/** The database was replaced under the feed: every group reads again. */
function onReset(): void {
  for (const group of registry.groups.values()) void refresh(group);
}

function register(threadKey: string, waiter: Waiter): void {
  if (registry.waiters >= MAX_WAITERS_PER_PROCESS) {
    throw new BatonError("unavailable", "Too many clients are waiting on this server; retry shortly.", null, 5);
  }
  // Subscribed before the first read, so that no event falls between that read and the wait.
  registry.unsubscribe ??= subscribeLedger(null, onEvents, onReset);
  let group = registry.groups.get(threadKey);
  if (!group) {
    group = { key: threadKey, waiters: new Set(), reading: false, again: false };
    registry.groups.set(threadKey, group);
  }
  group.waiters.add(waiter);
  registry.waiters++;
}

function unregister(threadKey: string, waiter: Waiter): void {
  const group = registry.groups.get(threadKey);
  if (!group?.waiters.delete(waiter)) return;
  registry.waiters--;
  if (!group.waiters.size) registry.groups.delete(threadKey);
  if (registry.waiters === 0) {
    // The last one out releases the feed (its timer and connection, when nobody else listens).
    registry.unsubscribe?.();
    registry.unsubscribe = null;
  }
}

/**
 * Reads the thread's merged handoff and, unless it is already news (a human
 * revision past `after`, or another active packet than `afterPacket`), waits
 * up to `waitMs` for a person to act or a packet to arrive. Throws not_found
 * for an unknown thread, and whatever a read throws.
 */
export async function waitForHandoffChange(request: WaitRequest): Promise<WaitOutcome> {
  const { threadKey, waitMs, signal } = request;
  if (waitMs <= 0 || signal?.aborted) {
    const handoff = await getMergedHandoff(threadKey);
    return { changed: isNews(request, handoff), handoff };
  }
  await ledgerFeedReady();

  return new Promise<WaitOutcome>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    let hold: ReaderHold | undefined;
    const waiter: Waiter = {
      after: request.after,
      afterPacket: request.afterPacket,
      latest: null,
      inWait: false,
      settle: (outcome) => {
        if (settled) return;
        settled = true;
        if (waiter.inWait) registry.inWait--;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        unregister(threadKey, waiter);
        hold?.release();
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      },
    };
    // The client went away: it hears nothing, but an answer is still due.
    const onAbort = () => (waiter.latest ? waiter.settle({ changed: false, handoff: waiter.latest }) : waiter.settle(new BatonError("unavailable", "The client went away.")));

    try {
      // The reader's own cap first (429), so that one reader cannot fill the process's (503).
      if (request.reader) hold = holdReader(request.reader, "wait", (error) => waiter.settle(error));
      register(threadKey, waiter);
    } catch (error) {
      hold?.release();
      reject(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    signal?.addEventListener("abort", onAbort, { once: true });

    getMergedHandoff(threadKey).then(
      (handoff) => {
        if (settled) return;
        // A group read that finished first is at least as new as this one.
        waiter.latest ??= handoff;
        waiter.afterPacket ??= handoff.packetId;
        if (isNews(waiter, waiter.latest)) {
          waiter.settle({ changed: true, handoff: waiter.latest });
          return;
        }
        timer = setTimeout(() => waiter.settle({ changed: false, handoff: waiter.latest! }), waitMs);
        waiter.inWait = true;
        registry.inWait++;
      },
      (error: unknown) => waiter.settle(error instanceof Error ? error : new Error(String(error))),
    );
  });
}

export interface WaitRegistryStatus {
  /** Requests waiting in this process. */
  waiters: number;
  /** Those past their first read: only news wakes them now. */
  inWait: number;
  /** Threads they wait on. */
  threads: number;
  /** True while the registry holds its ledger-feed subscription. */
  subscribed: boolean;
  /** Handoff reads made because an event woke a thread's waiters (one per woken thread, not per waiter). */
  wakeReads: number;
}

export function waitRegistryStatus(): WaitRegistryStatus {
  return { waiters: registry.waiters, inWait: registry.inWait, threads: registry.groups.size, subscribed: registry.unsubscribe !== null, wakeReads: registry.wakeReads };
}
