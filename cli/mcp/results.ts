import "server-only";
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";

/** What Baton's MCP tools answer with: a result the model reads, and progress while a tool waits. */

/** Knobs the tests turn. */
export const mcpTuning = {
  /** How often a waiting tool tells a client that asked for progress that it is still waiting. */
  progressEveryMs: 15_000,
};

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * A refusal the model can act on. The details ride in the text as JSON: clients check
 * structuredContent against the output schema even on errors.
 */
export function failure(message: string, details?: Record<string, unknown>): CallToolResult {
  return { isError: true, content: [{ type: "text", text: details ? `${message}\n${JSON.stringify(details)}` : message }] };
}

export function success<T extends Record<string, unknown>>(summary: string, structured: T): CallToolResult {
  return { content: [{ type: "text", text: `${summary}\n${JSON.stringify(structured)}` }], structuredContent: structured };
}

/** While `work` runs, progress notifications for a client that sent a progress token (so its request timeout can reset). */
export async function withProgress<T>(extra: Extra, label: string, work: () => Promise<T>): Promise<T> {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return work();
  let beats = 0;
  const started = Date.now();
  const timer = setInterval(() => {
    beats++;
    void extra
      .sendNotification({ method: "notifications/progress", params: { progressToken, progress: beats, message: `${label} (${Math.round((Date.now() - started) / 1000)} s)` } })
      .catch(() => undefined);
  }, mcpTuning.progressEveryMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
