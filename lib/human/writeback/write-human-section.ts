import "server-only";
import { database } from "../../db/client";
import { latestHumanRevision, sectionOf, type HumanSection } from "../section";
import { recordLedgerEvents } from "../../events/ledger";
import { packetContentHash } from "../../contract/canonical-json";
import { redactSecrets } from "../../contract/secrets";
import { ingestHandoffFile } from "../../ingest/watch/ingest-file";
import { handoffFileKind } from "../../ingest/watch/handoff-files";
import { writeBackHandoff } from "./write-back";
import { placeOf, versionPlaceSelect } from "../../views/verdict/roots";

/**
 * Writes the human section back into the active packet's handoff.json, only while the file
 * holds the version Baton ingested (docs/contract.md#the-human-section, docs/decisions/015-write-back.md).
 */

/**
 * The agent's fields, in the order it wrote them, then Baton's `human` section.
 * Rendered from the file's own text, not from the stored (redacted) packet: the
 * agent's fields, secrets included, stay in its file as it wrote them.
 */
export function renderMerged(agentText: string, human: HumanSection): string {
  const received = JSON.parse(agentText) as Record<string, unknown>;
  const merged: Record<string, unknown> = {};
  for (const key of Object.keys(received)) {
    if (key !== "human") Object.defineProperty(merged, key, { value: received[key], enumerable: true, writable: true });
  }
  merged.human = human;
  return `${JSON.stringify(merged, null, 2)}\n`;
}

/**
 * Whether the file still holds the stored version. Stored content is redacted
 * (decision 020), so the file's content is redacted the same way before hashing;
 * a version stored before redaction existed matches its file's raw hash.
 */
function holdsVersion(text: string, contentHash: string): boolean {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return false;
    const redacted = redactSecrets(parsed);
    if (packetContentHash(redacted.value as Record<string, unknown>) === contentHash) return true;
    return redacted.count > 0 && packetContentHash(parsed as Record<string, unknown>) === contentHash;
  } catch {
    return false;
  }
}

// One write-back at a time per thread, each reading the latest section when its turn comes:
// the file ends with the newest revision whatever order the actions finished in.
const queues = new Map<string, Promise<void>>();

export function scheduleWriteBack(threadKeys: readonly string[]): Promise<void> {
  return Promise.all(
    threadKeys.map((threadKey) => {
      const previous = queues.get(threadKey) ?? Promise.resolve();
      const next = previous
        .then(() => writeBackThread(threadKey))
        .catch((error: unknown) => console.error(`baton: writing back thread ${threadKey} failed:`, error instanceof Error ? error.message : error));
      queues.set(threadKey, next);
      void next.finally(() => {
        if (queues.get(threadKey) === next) queues.delete(threadKey);
      });
      return next;
    }),
  ).then(() => undefined);
}

/** Settles once every write-back scheduled so far has ended (a test's database is removed only then). */
export async function writeBacksSettled(): Promise<void> {
  await Promise.all(queues.values());
}

const SKIP_REASONS = {
  missing: "the file is gone",
  agent_changed: "the agent changed the file since Baton read it; its new content is ingested instead",
  outside_folder: "the file is a symlink to a file outside its own folder; Baton writes only inside the packet's folder",
  not_regular: "the path no longer holds a regular file (a FIFO, a device or a folder); Baton writes only regular files",
} as const;

async function writeBackThread(threadKey: string): Promise<void> {
  const db = await database();
  const thread = await db.thread.findUnique({
    where: { key: threadKey },
    select: {
      activeVersion: { select: { id: true, ...versionPlaceSelect, contentHash: true, humanRevisions: latestHumanRevision } },
    },
  });
  const version = thread?.activeVersion;
  // Its own file, or the one recorded when its file appeared after it arrived another way (decision 050).
  const sourcePath = version ? placeOf(version).sourcePath : null;
  // A Markdown handoff is the agent's prose: Baton never rewrites it (the merged packet is served instead).
  if (!version || !sourcePath || handoffFileKind(sourcePath) !== "json") return;
  const human = sectionOf(version.humanRevisions);
  if (human.revision === 0) return;
  const outcome = await writeBackHandoff({
    path: sourcePath,
    holdsIngestedVersion: (text) => holdsVersion(text, version.contentHash),
    render: (text) => renderMerged(text, human),
  });
  const event = { threadKey, versionId: version.id, actor: "baton" } as const;
  if (outcome.kind === "written") {
    await recordLedgerEvents([{ ...event, kind: "packet_written_back", data: { path: sourcePath, revision: human.revision } }]);
    return;
  }
  const reason = SKIP_REASONS[outcome.kind];
  await recordLedgerEvents([{ ...event, kind: "writeback_skipped", data: { path: sourcePath, revision: human.revision, reason } }]);
  if (outcome.kind === "agent_changed") await ingestHandoffFile(sourcePath);
}
