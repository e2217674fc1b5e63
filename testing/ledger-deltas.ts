import { database } from "../lib/db/client";
import { toLedgerEventDto, type LedgerEventDto } from "../lib/events/ledger";

/**
 * For the views' delta tests (board, inbox, risks, timeline): the ledger's head, the events
 * since a seq (what one live batch carries), and the first `event: delta` frame of a stream
 * that a test is waiting for.
 */

export async function headSeq(): Promise<number> {
  return (await (await database()).ledgerEvent.aggregate({ _max: { seq: true } }))._max.seq ?? 0;
}

export async function eventsAfter(seq: number): Promise<LedgerEventDto[]> {
  return (await (await database()).ledgerEvent.findMany({ where: { seq: { gt: seq } }, orderBy: { seq: "asc" } })).map(toLedgerEventDto);
}

/**
 * Reads a stream's `event: delta` frames until `pick` takes one (it returns undefined for the
 * others); with the bytes read by then. Cancels the stream after.
 */
export async function readDelta<T>(response: Response, pick: (data: unknown) => T | undefined, what: string): Promise<{ delta: T; bytes: number }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) throw new Error(`stream ended before a delta for ${what}; got ${buffer}`);
      buffer += decoder.decode(chunk.value, { stream: true });
      for (const block of buffer.split("\n\n")) {
        const data = /^event: delta\ndata: (.*)$/m.exec(block)?.[1];
        const delta = data ? pick(JSON.parse(data)) : undefined;
        if (delta !== undefined) return { delta, bytes: buffer.length };
      }
    }
  } finally {
    await reader.cancel();
  }
}
