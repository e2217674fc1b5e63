import "server-only";
import { threadsNamedBy, type LedgerEventDto } from "../../events/dto";
import { viewDeltaFrame } from "../../events/shared-frames";
import { inboxDeltaDto, type InboxDeltaDto } from "./dto";
import { listOpenQuestions } from "./inbox";

/**
 * The questions inbox's changes over the live stream (docs/decisions/064-board-deltas.md): the
 * open questions of the threads a batch names, read once for every stream that asks
 * (`?questions=`), in place of what each inbox held for those threads.
 */
export async function computeInboxDelta(events: readonly LedgerEventDto[]): Promise<InboxDeltaDto> {
  const seq = events.at(-1)?.seq ?? 0;
  const threads = threadsNamedBy(events);
  if (threads === null) return { view: "questions", seq, threads: [], groups: [], refetch: true };
  if (!threads.length) return { view: "questions", seq, threads, groups: [], refetch: false };
  const { groups } = await listOpenQuestions({ threadKeys: threads });
  return inboxDeltaDto.parse({ view: "questions", seq, threads, groups, refetch: false });
}

/** The `event: delta` frame of the inbox for a batch, made once; a failure is told as a refetch. */
export function inboxDeltaFrame(events: readonly LedgerEventDto[]): Promise<string> {
  return viewDeltaFrame("questions", events, null, () => computeInboxDelta(events), (): InboxDeltaDto => ({ view: "questions", seq: events.at(-1)?.seq ?? 0, threads: [], groups: [], refetch: true }));
}
