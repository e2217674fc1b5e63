import "server-only";
import { inSqlTransaction, isUniqueViolation } from "../db/client";
import { BatonError } from "../core/errors";
import { announceLedger } from "../events/bus";
import { storeBatch } from "./store-batch";
import type { IngestResult, PendingPacket } from "./types";
import { singleton } from "../core/singleton";

/**
 * Group commit: packets that arrive while a write transaction is running wait
 * and are stored together in the next one. With synchronous=FULL each commit
 * waits for the disk; sharing it keeps one acknowledged packet one durable
 * write without paying that wait per packet (docs/decisions/008-group-commit.md).
 */
const MAX_BATCH = 64;
/** How long a batch may wait for packets whose requests are still being read. */
const GATHER_MS = 8;
/** A commit this recent means packets are streaming in. */
const SUSTAINED_MS = 20;
/** How often a streaming writer with lone batches still waits once, to find company. */
const PROBE_EVERY_MS = 50;

interface Waiting {
  item: PendingPacket;
  resolve: (result: IngestResult) => void;
  reject: (error: unknown) => void;
}

interface IngestQueue {
  waiting: Waiting[];
  writing: boolean;
  /** Requests that announced a packet and have not submitted it yet. */
  arriving: number;
  lastCommitAt: number;
  lastGatherAt: number;
  lastBatchSize: number;
  /** Committed batches and the packets in them, since the process started. */
  committedBatches: number;
  committedPackets: number;
  gatherWaits: number;
}
const queue = singleton<IngestQueue>("IngestQueue", () => ({
  waiting: [],
  writing: false,
  arriving: 0,
  lastCommitAt: 0,
  lastGatherAt: 0,
  lastBatchSize: 0,
  committedBatches: 0,
  committedPackets: 0,
  gatherWaits: 0,
}));

/** How well commits are shared: batches committed and packets in them, since start. */
export function ingestWriterStats(): { batches: number; packets: number; waits: number } {
  return { batches: queue.committedBatches, packets: queue.committedPackets, waits: queue.gatherWaits };
}

export interface ArrivalTicket {
  /** Called when the packet is submitted, or the request gives up; idempotent. */
  release(): void;
}

/**
 * A request announces its packet as soon as its token is checked and within
 * its rate limit, before its body is read, so that the writer can wait a
 * moment for it rather than commit (and wait for the disk) once per packet.
 * (A refused request takes no ticket: a flood of them cannot hold up commits.)
 */
export function announceArrival(): ArrivalTicket {
  queue.arriving++;
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      queue.arriving--;
    },
  };
}

/**
 * Before a commit, waits up to GATHER_MS for more packets, but only when
 * company is likely: requests have announced packets, or packets are streaming
 * in (a commit moments ago) and the last batch was shared. A lone client's
 * packets are committed at once, but for a probe now and then, which is how
 * the writer notices that several clients have started sending.
 */
async function gather(): Promise<void> {
  const start = performance.now();
  const streaming = start - queue.lastCommitAt < SUSTAINED_MS;
  const probe = start - queue.lastGatherAt > PROBE_EVERY_MS;
  if (queue.arriving === 0 && !(streaming && (queue.lastBatchSize > 1 || probe))) return;
  queue.lastGatherAt = start;
  queue.gatherWaits++;
  const deadline = start + GATHER_MS;
  while (queue.waiting.length < MAX_BATCH && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
}

async function writeTogether(batch: Waiting[]): Promise<void> {
  const { results, stored } = await inSqlTransaction((sql) => storeBatch(sql, batch.map((waiting) => waiting.item)));
  queue.lastCommitAt = performance.now();
  queue.lastBatchSize = batch.length;
  queue.committedBatches++;
  queue.committedPackets += batch.length;
  if (stored) announceLedger();
  results.forEach((result, index) => {
    const waiting = batch[index]!;
    if (result instanceof BatonError) waiting.reject(result);
    else waiting.resolve(result);
  });
}

/** One packet in its own transaction; a race with another writer (unique key) is read again. */
async function writeAlone(waiting: Waiting): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await writeTogether([waiting]);
      return;
    } catch (error) {
      if (isUniqueViolation(error) && attempt < 3) continue;
      waiting.reject(error);
      return;
    }
  }
}

async function drain(): Promise<void> {
  queue.writing = true;
  try {
    while (queue.waiting.length) {
      await gather();
      const batch = queue.waiting.splice(0, MAX_BATCH);
      try {
        await writeTogether(batch);
      } catch (error) {
        if (error instanceof BatonError) {
          // A busy database (503, after inSqlTransaction waited its whole busy timeout)
          // fails the batch alike, and the packets that queued up meanwhile: each
          // would otherwise wait out another timeout behind it, to the same answer.
          const failed = error.code === "unavailable" ? [...batch, ...queue.waiting.splice(0)] : batch;
          for (const waiting of failed) waiting.reject(error);
        } else if (batch.length === 1) {
          await writeAlone(batch[0]!);
        } else {
          // Anything else is retried item by item, so one packet's problem never fails its neighbours.
          for (const waiting of batch) await writeAlone(waiting);
        }
      }
    }
  } finally {
    queue.writing = false;
  }
}

/** Stores one validated packet; resolves once its transaction has committed. */
export function submitForStorage(item: PendingPacket, arrival?: ArrivalTicket): Promise<IngestResult> {
  return new Promise<IngestResult>((resolve, reject) => {
    queue.waiting.push({ item, resolve, reject });
    arrival?.release();
    if (!queue.writing) void drain();
  });
}
