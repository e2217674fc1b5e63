import { singleton } from "../core/singleton";

/**
 * Frames derived from a batch of ledger events (a view's delta, docs/decisions/064-board-deltas.md),
 * made once and sent by every stream that asks alike: a live batch reaches each stream as the same
 * events within milliseconds, so the last few frames are kept by what they were made from.
 */

/** Frames kept (a frame of a large batch is large). */
const KEPT_FRAMES = 16;

const frames = singleton("SharedFrames", () => ({ byId: new Map<string, Promise<string>>(), made: 0 }));

/** How many frames this process has made (bench:viewers and the tests compare it with the viewers). */
export function sharedFramesMade(): number {
  return frames.made;
}

/** The frame `id` names, made by `make` unless a stream asked for it a moment ago. */
export function sharedFrame(id: string, make: () => Promise<string>): Promise<string> {
  const known = frames.byId.get(id);
  if (known) return known;
  frames.made++;
  const frame = make();
  frames.byId.set(id, frame);
  for (const old of frames.byId.keys()) {
    if (frames.byId.size <= KEPT_FRAMES) break;
    frames.byId.delete(old);
  }
  return frame;
}

/** A view's delta as a server-sent event: `event: delta`, no `id:` (the resume cursor stays the ledger's seq). */
export function deltaFrame(delta: { view: string; seq: number }): string {
  return `event: delta\ndata: ${JSON.stringify(delta)}\n\n`;
}

/**
 * A view's delta frame for a batch, made once per view, batch and `key` (the stream's filters)
 * for every stream that asks. A failure is logged and sent as the view's refetch delta, never
 * thrown into the stream.
 */
export function viewDeltaFrame<Delta extends { view: string; seq: number }>(
  view: string,
  events: readonly { seq: number }[],
  key: unknown,
  compute: () => Promise<Delta>,
  refetch: () => Delta,
): Promise<string> {
  const id = JSON.stringify([view, events[0]?.seq, events.at(-1)?.seq, events.length, key ?? null]);
  return sharedFrame(id, () =>
    compute().then(deltaFrame, (error: unknown) => {
      console.error(`baton: the ${view} delta failed; its viewers refetch`, error);
      return deltaFrame(refetch());
    }),
  );
}
