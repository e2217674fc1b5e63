import "server-only";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { normalisePacket } from "../../lib/contract/normalise";
import { validatePacket } from "../../lib/contract/validate";
import { answeredQuestionIds, humanSectionSchema, type HumanAnswer } from "../../lib/human/section";
import { pullHandoff } from "../sync/pull";
import { pushPacketText, type PushTarget } from "../sync/push";
import { waitForAction } from "../sync/wait-for-action";

/**
 * The `ask` tool's work: a question asked mid-session becomes a new version of the
 * thread carrying it (docs/decisions/057-mcp-ask-as-a-version.md), then the tool waits
 * for people's answers to it with `baton wait`'s loop.
 */

export const askedQuestionSchema = z.object({
  question: z.string().trim().min(1, "must not be empty").max(4_000, "is at most 4,000 characters").describe("The question, complete on its own: the person sees it in the questions inbox without your context."),
  context: z.string().max(4_000, "is at most 4,000 characters").optional().describe("What the person needs to answer well: what you tried, what each choice costs."),
  options: z.array(z.string().min(1).max(200)).max(10).optional().describe("Suggested answers the person can pick with one click; they may still write another."),
  blocking: z.boolean().default(true).describe("True (the default) when you cannot go on without the answer; the thread then sorts first in the inbox."),
  id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "is 1 to 64 letters, digits, dots, dashes or underscores").optional().describe("Your own id for the question; one is made when absent."),
});
export type AskedQuestion = z.input<typeof askedQuestionSchema>;

export type Asked = { ok: true; packetId: string; questionIds: string[] } | { ok: false; message: string };

/**
 * Stores the thread's latest agent packet again with `questions` added: the questions it
 * already asked that nobody answered keep their canonical ids (so their answers still
 * match), answered ones are left out (their answers stay on the version that asked them).
 */
export async function askOnThread(target: PushTarget, threadKey: string, questions: AskedQuestion[]): Promise<Asked> {
  const pulled = await pullHandoff(target, threadKey);
  if (!pulled.ok) {
    const hint = pulled.status === 404 ? " Hand off first with the `handoff` tool (a packet with at least a summary), then ask." : "";
    return { ok: false, message: `${pulled.message}${hint}` };
  }
  const { human, ...agentFields } = pulled.packet;
  const section = humanSectionSchema.safeParse(human);
  if (!section.success) return { ok: false, message: `${target.url} served a handoff without Baton's human section` };
  const answered = answeredQuestionIds(section.data);
  const canonical = normalisePacket(validatePacket(agentFields), agentFields).canonical.questions_for_human ?? [];
  const kept = canonical
    .filter((question) => !answered.has(question.id))
    .map((question) => ({ id: question.id, question: question.question, context: question.context, options: question.options, blocking: question.blocking }));
  const taken = new Set(canonical.map((question) => question.id));
  const asked = questions.map((question) => {
    const parsed = askedQuestionSchema.parse(question);
    let id = parsed.id ?? `ask-${randomBytes(4).toString("hex")}`;
    while (taken.has(id)) id = `ask-${randomBytes(4).toString("hex")}`;
    taken.add(id);
    return { ...parsed, id };
  });
  // Sorted by created_at (decision 024): the version asking now is the newest. `thread` names the
  // thread whatever its key came from: a key from the content hash would change with the content.
  const packet = { ...agentFields, thread: threadKey, created_at: new Date().toISOString(), questions_for_human: [...kept, ...asked] };
  const pushed = await pushPacketText(target, JSON.stringify(packet));
  if (!pushed.ok) return { ok: false, message: pushed.message };
  if (pushed.threadKey !== threadKey) return { ok: false, message: `the questions were stored on thread "${pushed.threadKey}", not "${threadKey}"` };
  return { ok: true, packetId: pushed.packetId, questionIds: asked.map((question) => question.id) };
}

export type AnswersWait =
  | { kind: "answered" | "not_answered_yet"; answers: HumanAnswer[]; pending: string[] }
  | { kind: "superseded"; activePacketId: string }
  | { kind: "error"; message: string };

/** Waits up to `waitMs` until every one of `questionIds` on `packetId` has an answer. */
export async function waitForAnswers(
  target: PushTarget,
  threadKey: string,
  packetId: string,
  questionIds: string[],
  waitMs: number,
  say: (text: string) => void,
  signal?: AbortSignal,
): Promise<AnswersWait> {
  const deadline = Date.now() + waitMs;
  const judge = (section: z.infer<typeof humanSectionSchema>) => {
    const answers = section.answers.filter((answer) => questionIds.includes(answer.question_id));
    const answeredIds = new Set(answers.map((answer) => answer.question_id));
    return { answers, pending: questionIds.filter((id) => !answeredIds.has(id)) };
  };
  const pulled = await pullHandoff(target, threadKey);
  if (!pulled.ok) return { kind: "error", message: pulled.message };
  if (pulled.packetId !== packetId) return { kind: "superseded", activePacketId: pulled.packetId ?? "unknown" };
  const section = humanSectionSchema.parse(pulled.packet.human);
  let state = judge(section);
  let after = section.revision;
  while (state.pending.length) {
    const remainingMs = deadline - Date.now();
    if (remainingMs <= 0) break;
    const result = await waitForAction(target, threadKey, { for: "answers", timeoutMs: remainingMs, after, say, signal });
    if (result.kind === "error") return { kind: "error", message: result.message };
    if (result.kind === "timedOut") break;
    if (result.seen.packetId !== packetId) return { kind: "superseded", activePacketId: result.seen.packetId };
    state = judge(result.seen.section);
    after = result.seen.revision;
  }
  return { kind: state.pending.length ? "not_answered_yet" : "answered", ...state };
}
