import "server-only";
import { database } from "../../db/client";
import { inChunks } from "../../db/sql";
import type { Prisma } from "../../generated/prisma/client";
import { compareQuestionGroups, inboxDto, type InboxDto, type QuestionGroupDto } from "./dto";
import { answeredQuestionIds, latestHumanRevision, sameQuestionKey, sectionOf } from "../../human/section";

/**
 * The questions inbox (docs/product.md#questions): every unanswered questions_for_human of
 * every active packet, identical ones grouped, blocking first, then oldest.
 */
export async function listOpenQuestions(options: { /** Only these threads' questions (a stream delta, ./inbox-delta.ts). */ threadKeys?: readonly string[] } = {}): Promise<InboxDto> {
  const db = await database();
  const active = { version: { activeFor: { is: { archived: false } } } };
  const read = (where: Prisma.AgentQuestionWhereInput) =>
    db.agentQuestion.findMany({
      where,
      // A stable order: a group's wording and options come from its first question.
      orderBy: [{ versionId: "asc" }, { position: "asc" }],
      select: {
        questionId: true,
        question: true,
        context: true,
        options: true,
        blocking: true,
        position: true,
        thread: { select: { key: true, agent: true } },
        version: { select: { id: true, receivedAt: true, producerCreatedAt: true, humanRevisions: latestHumanRevision } },
      },
    });
  const rows = options.threadKeys
    ? (await inChunks(options.threadKeys, (keys) => read({ ...active, thread: { key: { in: keys } } }))).sort(
        (a, b) => (a.version.id < b.version.id ? -1 : a.version.id > b.version.id ? 1 : a.position - b.position),
      )
    : await read(active);
  const groups = new Map<string, QuestionGroupDto>();
  const answeredByVersion = new Map<string, Set<string>>();
  const optionsByGroup = new Map<string, Set<string>>();
  let total = 0;
  for (const row of rows) {
    const section = sectionOf(row.version.humanRevisions);
    let answered = answeredByVersion.get(row.version.id);
    if (!answered) answeredByVersion.set(row.version.id, (answered = answeredQuestionIds(section)));
    if (answered.has(row.questionId)) continue;
    total++;
    const askedAt = (row.version.producerCreatedAt ?? row.version.receivedAt).toISOString();
    const key = sameQuestionKey(row.question);
    const group = groups.get(key) ?? { key, question: row.question, blocking: false, options: [], asked_at: askedAt, items: [] };
    group.blocking ||= row.blocking;
    // A Set per group, turned into the list once: one packet may hold thousands of the same question.
    let options = optionsByGroup.get(key);
    if (!options) optionsByGroup.set(key, (options = new Set()));
    for (const option of JSON.parse(row.options) as string[]) options.add(option);
    if (askedAt < group.asked_at) group.asked_at = askedAt;
    group.items.push({
      thread_key: row.thread.key,
      agent: row.thread.agent,
      packet_id: row.version.id,
      base_revision: section.revision,
      question_id: row.questionId,
      context: row.context,
      asked_at: askedAt,
      received_at: row.version.receivedAt.toISOString(),
    });
    groups.set(key, group);
  }
  for (const [key, options] of optionsByGroup) groups.get(key)!.options = [...options];
  const ordered = [...groups.values()].sort(compareQuestionGroups);
  for (const group of ordered) group.items.sort((a, b) => a.asked_at.localeCompare(b.asked_at) || a.thread_key.localeCompare(b.thread_key));
  return inboxDto.parse({ groups: ordered, total });
}
