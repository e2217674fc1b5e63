import type { NewLedgerEvent } from "../events/ledger";
import { isNewer, sortTimeFor } from "./ordering";
import type { ThreadState } from "./thread-state";
import type { PendingPacket } from "./types";

/** Decides whether the new version becomes active, updates the thread in memory, and records events. */
export function planVersion(
  item: PendingPacket,
  versionId: string,
  arrivalSeq: number,
  thread: ThreadState,
  pushEvent: (at: Date, event: NewLedgerEvent) => void,
): boolean {
  const { packet, source, receivedAt } = item;
  const { canonical } = packet;
  const sortAt = sortTimeFor(packet.createdAtMs, receivedAt);
  const becomesActive =
    !thread.activeVersionId ||
    !thread.activeSortAt ||
    !thread.activeReceivedAt ||
    isNewer(
      { sortAt, receivedAt, arrivalSeq, id: versionId },
      { sortAt: thread.activeSortAt, receivedAt: thread.activeReceivedAt, arrivalSeq: thread.activeArrivalSeq, id: thread.activeVersionId },
    );
  const wasArchived = thread.archived;
  const producerArchives = becomesActive && canonical.status === "archived";
  const previousActive = thread.activeVersionId;

  if (becomesActive) {
    Object.assign(thread, {
      changed: true,
      archived: producerArchives,
      activeVersionId: versionId,
      activeSortAt: sortAt,
      activeReceivedAt: receivedAt,
      activeArrivalSeq: arrivalSeq,
      updatedAt: receivedAt,
      agent: canonical.agent?.name ?? null,
      project: canonical.project ?? null,
      branch: canonical.branch ?? null,
      topic: canonical.topic ?? null,
    });
  } else if (wasArchived) {
    // A new packet re-opens an archived thread, whatever its age.
    Object.assign(thread, { changed: true, archived: false, updatedAt: receivedAt });
  }
  // Otherwise a late, older packet is history only: the card and its place on the board stay.

  const key = packet.threadKey;
  pushEvent(receivedAt, {
    kind: "packet_received",
    threadKey: key,
    versionId,
    actor: source.actor,
    data: {
      source: source.kind,
      ...(source.sourcePath ? { source_path: source.sourcePath } : {}),
      flags: packet.flags.map((flag) => flag.code),
      next_action: canonical.next_action?.text ?? null,
      highest_severity: packet.highestSeverity,
      superseded_on_arrival: !becomesActive,
      // Only when there were any (decision 020): how many secrets were redacted, and of what kinds.
      ...(item.reports.length ? { reports: item.reports.map((report) => report.ref) } : {}),
      ...(packet.secretsRedacted.count ? { secrets_redacted: packet.secretsRedacted.count, secret_kinds: packet.secretsRedacted.kinds } : {}),
    },
  });
  if (becomesActive && previousActive) {
    pushEvent(receivedAt, { kind: "packet_superseded", threadKey: key, versionId: previousActive, actor: source.actor, data: { superseded_by: versionId } });
  }
  if (wasArchived && !producerArchives) {
    pushEvent(receivedAt, { kind: "thread_reopened", threadKey: key, versionId, actor: source.actor, data: {} });
  }
  if (producerArchives && !wasArchived) {
    pushEvent(receivedAt, {
      kind: "thread_archived",
      threadKey: key,
      versionId,
      actor: source.actor,
      data: { reason: "the producer marked the packet archived" },
    });
  }
  return becomesActive;
}
