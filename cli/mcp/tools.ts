import "server-only";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { COLUMNS } from "../../lib/board/columns";
import { boardDto } from "../../lib/board/dto";
import { BatonError } from "../../lib/core/errors";
import { validatePacket } from "../../lib/contract/validate";
import { humanSectionSchema } from "../../lib/human/section";
import { MAX_WAIT_SECONDS } from "../../lib/human/wait-limit";
import { pullHandoff } from "../sync/pull";
import { pushPacketText, type PushTarget } from "../sync/push";
import { WAIT_EXIT, WAIT_FOR, waitForAction } from "../sync/wait-for-action";
import { readApi } from "./api";
import { askedQuestionSchema, askOnThread, waitForAnswers } from "./ask";
import { askOutput, decisionOutput, handoffOutput, statusOutput } from "./outputs";
import { failure, success, withProgress } from "./results";

export { mcpTuning } from "./results";

/**
 * Baton's MCP tools and resources, the same over stdio (`baton mcp`, cli/mcp/stdio.ts) and
 * Streamable HTTP (app/api/v1/mcp/route.ts). Every tool is a client of Baton's REST API
 * with the caller's token, so the routes' scope checks and token projects apply unchanged.
 */

export const MCP_SERVER_NAME = "baton";
/** `ask` waits this long by default; the waiting read's limit (decision 019) is its most. */
export const ASK_DEFAULT_WAIT_SECONDS = 180;
/** `wait_for_decision` may wait longer than one waiting read: it reconnects like `baton wait`. */
export const DECISION_MAX_WAIT_SECONDS = 3_600;
const STATUS_DEFAULT_LIMIT = 50;
const STATUS_MAX_LIMIT = 200;
const threadKey = z.string().min(1).max(500).describe("The thread key, as `handoff` answered it (e.g. acme@main).");

const outcomeNames = { [WAIT_EXIT.approved]: "approved", [WAIT_EXIT.intervened]: "intervened", [WAIT_EXIT.answered]: "answered" } as const;

async function boardQuery(target: PushTarget, filters: Record<string, string | string[] | undefined>) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) {
    if (Array.isArray(value) ? value.length : value) query.set(name, Array.isArray(value) ? value.join(",") : value!);
  }
  const read = await readApi(target, `/api/v1/board${query.size ? `?${query}` : ""}`);
  if (!read.ok) return read;
  const board = boardDto.safeParse(JSON.parse(read.text));
  if (!board.success) return { ok: false as const, status: 200, message: `${target.url} answered with something other than a board` };
  return { ok: true as const, board: board.data };
}

/** The MCP server with Baton's tools, talking to Baton at `target`; `log` takes progress lines (never secrets). */
export function createBatonMcpServer(target: PushTarget, log: (line: string) => void = () => undefined): McpServer {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, version: "0.1.0" },
    {
      instructions:
        "Baton keeps the handoff between your sessions and the people who supervise them. Start with `pull` to read what the last session and the person left; " +
        "`ask` a person when only they can settle something; end your session with `handoff`; `wait_for_decision` when you must not go on before a person approves.",
    },
  );

  server.registerTool(
    "handoff",
    {
      title: "Hand off this session",
      description:
        "Send this session's handoff packet to Baton at the end of your work (or at a milestone). The packet is a JSON object with the contract's fields " +
        "(docs/contract.md): summary, changed_files, commands_run, failed_attempts, open_risks, next_action, verdict_pointer (at least one), plus identity " +
        "(repo, branch, agent, session_id, created_at) and optional questions_for_human. It is checked with the server's own rules; when a field is wrong the " +
        "tool answers with each field, the problem and what it accepts: fix those and call again. Answers with the thread key, lint flags and the board column.",
      inputSchema: { packet: z.record(z.string(), z.unknown()).describe("The handoff packet (handoff.json) as an object.") },
      outputSchema: handoffOutput,
      annotations: { idempotentHint: true, openWorldHint: false },
    },
    async ({ packet }) => {
      try {
        validatePacket(packet);
      } catch (error) {
        if (!(error instanceof BatonError)) throw error;
        const fields = (error.details as { fields?: unknown } | null)?.fields;
        return failure(`${error.message} Fix the fields and call handoff again.`, { code: error.code, ...(fields ? { fields } : {}) });
      }
      const pushed = await pushPacketText(target, JSON.stringify(packet));
      if (!pushed.ok) return failure(`Not stored${pushed.status ? ` (HTTP ${pushed.status})` : ""}: ${pushed.message}`);
      const found = await boardQuery(target, { q: pushed.threadKey });
      const card = found.ok ? found.board.columns.flatMap((column) => column.cards).find((entry) => entry.key === pushed.threadKey) : undefined;
      return success(`${pushed.duplicate ? "Already stored" : "Stored"} ${pushed.packetId} on ${pushed.threadKey}${card ? `: ${card.column} (${card.column_reason})` : ""}.`, {
        thread_key: pushed.threadKey,
        packet_id: pushed.packetId,
        duplicate: pushed.duplicate,
        flags: pushed.flags,
        column: card?.column ?? null,
        reason: card?.column_reason ?? null,
      });
    },
  );

  server.registerTool(
    "pull",
    {
      title: "Read the thread's handoff",
      description:
        "Read the merged handoff packet of a thread: the last session's fields plus `human`, what people did on it (decision approved or intervened, " +
        "answers to its questions, and instructions in human.questions that come first). Call it when a session starts: it is what you start from.",
      inputSchema: { thread: threadKey },
      outputSchema: { thread_key: z.string(), packet_id: z.string().nullable(), human_revision: z.number().int(), packet: z.record(z.string(), z.unknown()) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ thread }) => {
      const pulled = await pullHandoff(target, thread);
      if (!pulled.ok) return failure(`Cannot read ${thread}${pulled.status ? ` (HTTP ${pulled.status})` : ""}: ${pulled.message}`);
      const human = humanSectionSchema.safeParse(pulled.packet.human);
      return success(`Handoff of ${thread} (packet ${pulled.packetId}).`, {
        thread_key: thread,
        packet_id: pulled.packetId,
        human_revision: human.success ? human.data.revision : 0,
        packet: pulled.packet,
      });
    },
  );

  server.registerTool(
    "ask",
    {
      title: "Ask a person",
      description:
        "Ask a person one or more questions on your thread and wait for the answers. The questions appear at once in Baton's questions inbox; " +
        `the tool waits up to wait_seconds (default ${ASK_DEFAULT_WAIT_SECONDS}, at most ${MAX_WAIT_SECONDS}) and returns the answers. ` +
        "If nobody answered yet it says so and gives `keep_waiting`: call ask with exactly those arguments to go on waiting (do not ask again). " +
        "The thread must have a handoff already (call `handoff` first). Asking stores a new version of the thread carrying the questions.",
      inputSchema: {
        thread: threadKey,
        questions: z.array(askedQuestionSchema).min(1).max(20).optional().describe("The questions to ask; omit when waiting_on is given."),
        waiting_on: z
          .object({ packet_id: z.string().min(1).max(200), question_ids: z.array(z.string().min(1).max(200)).min(1).max(20) })
          .optional()
          .describe("Keep waiting for questions already asked: the keep_waiting.arguments.waiting_on of an earlier answer."),
        wait_seconds: z.number().min(0).max(MAX_WAIT_SECONDS).default(ASK_DEFAULT_WAIT_SECONDS).describe("How long to wait for the answers in this call; 0 asks without waiting."),
      },
      outputSchema: askOutput,
      annotations: { openWorldHint: false },
    },
    async ({ thread, questions, waiting_on: waitingOn, wait_seconds: waitSeconds }, extra) => {
      if (!questions === !waitingOn) return failure("Give either `questions` (to ask) or `waiting_on` (to keep waiting for questions already asked), not both or neither.");
      let packetId: string;
      let questionIds: string[];
      if (questions) {
        const asked = await askOnThread(target, thread, questions);
        if (!asked.ok) return failure(`Not asked: ${asked.message}`);
        ({ packetId, questionIds } = asked);
        log(`asked ${questionIds.join(", ")} on ${thread} (packet ${packetId})`);
      } else {
        ({ packet_id: packetId, question_ids: questionIds } = waitingOn!);
      }
      const waited = await withProgress(extra, "waiting for a person's answer", () => waitForAnswers(target, thread, packetId, questionIds, waitSeconds * 1000, log, extra.signal));
      if (waited.kind === "error") return failure(`Asked, but cannot wait for the answers: ${waited.message}`);
      const base = { thread_key: thread, packet_id: packetId, question_ids: questionIds };
      if (waited.kind === "superseded") {
        return success(`A newer packet (${waited.activePacketId}) replaced the one that asked; its questions are no longer open. Pull the thread and ask again if you still need to.`, {
          ...base,
          status: "superseded" as const,
          answers: [],
          pending_question_ids: questionIds,
          keep_waiting: null,
        });
      }
      const answered = waited.kind === "answered";
      const keepWaiting = answered ? null : { tool: "ask" as const, arguments: { thread, waiting_on: { packet_id: packetId, question_ids: waited.pending } } };
      return success(
        answered
          ? `Answered: ${waited.answers.map((answer) => `${answer.question_id}: ${answer.answer} (${answer.by})`).join("; ")}`
          : `Not answered yet (${waited.pending.join(", ")}). Call ask with keep_waiting.arguments to keep waiting.`,
        { ...base, status: waited.kind, answers: waited.answers, pending_question_ids: waited.pending, keep_waiting: keepWaiting },
      );
    },
  );

  server.registerTool(
    "wait_for_decision",
    {
      title: "Wait for a person",
      description:
        "Block until a person acts on the thread's current packet, like `baton wait`: approved (go ahead with next_action), intervened (stop: deal with " +
        "human.questions first), answered (for: answers or any), or timed_out (nobody acted; call again to keep waiting). Counts what happens after the call " +
        "starts, or after human revision `after_revision`.",
      inputSchema: {
        thread: threadKey,
        for: z.enum(WAIT_FOR).default("decision").describe("decision (approve or intervene, the default), answers, or any."),
        timeout_seconds: z.number().min(1).max(DECISION_MAX_WAIT_SECONDS).default(MAX_WAIT_SECONDS).describe("Give up after this long."),
        after_revision: z.number().int().min(0).optional().describe("Count what happened after this human revision (pull's human_revision); default: now."),
      },
      outputSchema: decisionOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ thread, for: waitFor, timeout_seconds: timeoutSeconds, after_revision: after }, extra) => {
      const result = await withProgress(extra, "waiting for a person", () => waitForAction(target, thread, { for: waitFor, timeoutMs: timeoutSeconds * 1000, after, say: log, signal: extra.signal }));
      if (result.kind === "error") return failure(`Cannot wait on ${thread}: ${result.message}`);
      if (result.kind === "timedOut") {
        const message = `Nobody acted on ${thread} within ${timeoutSeconds} s; call wait_for_decision again to keep waiting.`;
        return success(message, { outcome: "timed_out" as const, exit_code: WAIT_EXIT.timedOut, thread_key: thread, packet_id: null, human: null, message });
      }
      const outcome = outcomeNames[result.code as keyof typeof outcomeNames];
      return success(result.description, {
        outcome,
        exit_code: result.code,
        thread_key: thread,
        packet_id: result.seen.packetId,
        human: result.seen.section,
        message: result.description,
      });
    },
  );

  server.registerTool(
    "status",
    {
      title: "Threads that need a person",
      description:
        "For an orchestrating agent: the threads in the board's Needs you column (or the columns you name) and why each is there, filtered like the board " +
        "(q text, agent, project, branch, severity, flag). Bounded by limit; total counts them all.",
      inputSchema: {
        columns: z.array(z.enum(COLUMNS)).min(1).default(["needs_you"]).describe("Board columns to list; needs_you by default."),
        q: z.string().max(200).optional().describe("Text in the key, agent, project, branch, topic, summary or next action."),
        agent: z.string().max(200).optional(),
        project: z.string().max(200).optional(),
        branch: z.string().max(200).optional(),
        severity: z.array(z.string().max(20)).max(10).optional().describe("Highest open risk severity: critical, high, medium, low, info."),
        flag: z.array(z.string().max(60)).max(20).optional().describe("Lint flag codes the active packet carries."),
        limit: z.number().int().min(1).max(STATUS_MAX_LIMIT).default(STATUS_DEFAULT_LIMIT),
      },
      outputSchema: statusOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ columns, limit, ...filters }) => {
      const found = await boardQuery(target, filters);
      if (!found.ok) return failure(`Cannot read the board${found.status ? ` (HTTP ${found.status})` : ""}: ${found.message}`);
      const wanted = found.board.columns.filter((column) => columns.includes(column.id));
      const threads = wanted
        .flatMap((column) => column.cards)
        .slice(0, limit)
        .map((card) => ({
          thread_key: card.key,
          agent: card.agent,
          project: card.project,
          branch: card.branch,
          topic: card.topic,
          column: card.column,
          reason: card.column_reason,
          summary: card.active_packet.summary,
          next_action: card.active_packet.next_action,
          unanswered_questions: card.active_packet.human.unanswered_questions,
          decision: card.active_packet.human.decision?.kind ?? null,
          updated_at: card.updated_at,
        }));
      const total = wanted.reduce((sum, column) => sum + column.count, 0);
      return success(`${total} thread${total === 1 ? "" : "s"} in ${columns.join(", ")}${threads.length < total ? ` (first ${threads.length})` : ""}.`, { columns, total, threads });
    },
  );

  server.registerResource(
    "handoff",
    new ResourceTemplate("baton://threads/{thread}/handoff.json", { list: undefined }),
    { title: "A thread's merged handoff packet", description: "What the next session starts from: the agent's fields plus `human`.", mimeType: "application/json" },
    async (uri, variables) => {
      const thread = decodeURIComponent(String(variables.thread));
      const pulled = await pullHandoff(target, thread);
      if (!pulled.ok) throw new Error(`Cannot read ${thread}: ${pulled.message}`);
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(pulled.packet, null, 2) }] };
    },
  );

  server.registerResource(
    "handoff-markdown",
    new ResourceTemplate("baton://threads/{thread}/handoff.md", { list: undefined }),
    { title: "A thread's handoff.md", description: "The thread's active version as markdown, as a pull request body shows it.", mimeType: "text/markdown" },
    async (uri, variables) => {
      const thread = decodeURIComponent(String(variables.thread));
      const pulled = await pullHandoff(target, thread);
      if (!pulled.ok || !pulled.packetId) throw new Error(`Cannot read ${thread}: ${pulled.ok ? "no packet id in the answer" : pulled.message}`);
      const read = await readApi(target, `/api/v1/packets/${encodeURIComponent(pulled.packetId)}/markdown`, "text/markdown");
      if (!read.ok) throw new Error(`Cannot read the markdown of ${thread}: ${read.message}`);
      return { contents: [{ uri: uri.href, mimeType: "text/markdown", text: read.text }] };
    },
  );

  return server;
}
