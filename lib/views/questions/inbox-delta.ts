import "server-only";
import { threadsNamedBy, type LedgerEventDto } from "../../events/dto";
import { deltaFrame, sharedFrame } from "../../events/shared-frames";
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
  const id = JSON.stringify(["questions", events[0]?.seq, events.at(-1)?.seq, events.length]);
  return sharedFrame(id, () =>
    computeInboxDelta(events).then(deltaFrame, (error: unknown) => {
      console.error("baton: questions delta failed; viewers refetch the inbox", error);
      const refetch: InboxDeltaDto = { view: "questions", seq: events.at(-1)?.seq ?? 0, threads: [], groups: [], refetch: true };
      return deltaFrame(refetch);
    }),
  );
}
