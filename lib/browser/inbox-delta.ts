import { compareQuestionGroups, inboxDeltaDto, type InboxDto } from "../views/questions/dto";

/**
 * The inbox with a stream delta applied (lib/views/questions/inbox-delta.ts): the named threads'
 * questions replaced, groups in the server's order, the total recounted. Null (refetch) when it
 * asks for that, does not pass its schema, or touches a group shared with threads it does not
 * name: a shared group's wording, options and blocking are the server's to merge.
 */
export function applyInboxDelta(inbox: InboxDto, frame: unknown): InboxDto | null {
  const parsed = inboxDeltaDto.safeParse(frame);
  if (!parsed.success || parsed.data.refetch) return null;
  const delta = parsed.data;
  if (!delta.threads.length) return inbox;
  const changed = new Set(delta.threads);
  const kept = [];
  for (const group of inbox.groups) {
    const theirs = group.items.filter((item) => changed.has(item.thread_key)).length;
    if (theirs === 0) kept.push(group);
    else if (theirs < group.items.length) return null;
  }
  const keptKeys = new Set(kept.map((group) => group.key));
  if (delta.groups.some((group) => keptKeys.has(group.key))) return null;
  const groups = [...kept, ...delta.groups].sort(compareQuestionGroups);
  return { groups, total: groups.reduce((sum, group) => sum + group.items.length, 0) };
}
