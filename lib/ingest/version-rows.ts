import "server-only";
import { newId } from "../db/ids";
import { sortTimeFor } from "./ordering";
import type { PendingPacket } from "./types";

export const VERSION_COLUMNS = [
  "id", "threadId", "contentHash", "receivedJson", "canonicalJson", "source", "sourcePath", "workspaceRoot",
  "producerCreatedAt", "receivedAt", "sortAt", "arrivalSeq", "flags", "nextAction", "highestSeverity", "riskCounts",
  "questionCount", "summary", "agent", "project", "branch", "topic", "taskId", "sessionId",
] as const;
export const RISK_COLUMNS = ["id", "versionId", "threadId", "position", "riskId", "severity", "severityRaw", "detail", "mitigation", "fingerprint"] as const;
export const QUESTION_COLUMNS = ["id", "versionId", "threadId", "position", "questionId", "question", "context", "options", "blocking"] as const;

/** Adds the rows of a new version, its risks and its questions. */
export function collectRows(
  item: PendingPacket,
  versionId: string,
  arrivalSeq: number,
  threadId: string,
  versionRows: unknown[][],
  riskRows: unknown[][],
  questionRows: unknown[][],
): void {
  const { packet, source, receivedAt } = item;
  const { canonical } = packet;
  const at = receivedAt.getTime();
  versionRows.push([
    versionId, threadId, packet.contentHash, JSON.stringify(packet.received), JSON.stringify(canonical), source.kind,
    source.sourcePath ?? null, source.workspaceRoot ?? null,
    packet.createdAtMs === null ? null : new Date(packet.createdAtMs), receivedAt, sortTimeFor(packet.createdAtMs, receivedAt), arrivalSeq,
    JSON.stringify(packet.flags), canonical.next_action?.text ?? null, packet.highestSeverity, JSON.stringify(packet.riskCounts),
    canonical.questions_for_human?.length ?? 0, canonical.summary ?? null, canonical.agent?.name ?? null,
    canonical.project ?? null, canonical.branch ?? null, canonical.topic ?? null, canonical.task_id ?? null,
    canonical.session_id ?? null,
  ]);
  for (const [position, risk] of (canonical.open_risks ?? []).entries()) {
    riskRows.push([
      newId("rk", at), versionId, threadId, position, risk.id, risk.severity, risk.severity_raw, risk.detail,
      risk.mitigation ?? null, risk.fingerprint,
    ]);
  }
  for (const [position, question] of (canonical.questions_for_human ?? []).entries()) {
    questionRows.push([
      newId("aq", at), versionId, threadId, position, question.id, question.question, question.context ?? null,
      JSON.stringify(question.options ?? []), question.blocking,
    ]);
  }
}
