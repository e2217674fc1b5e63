import "server-only";
import { pushTargetFromEnv, type PushTarget } from "./target";

/** The HTTP client `baton pull` reads a thread's merged handoff packet with. */

export interface ServerOptions {
  /** Baton's URL; BATON_URL (as for `baton push`) when absent. */
  server?: string;
  /** An API token; BATON_TOKEN (as for `baton push`) when absent. */
  token?: string;
}

export type PullOutcome =
  | { ok: true; packetId: string | null; etag: string | null; packet: Record<string, unknown> }
  | { ok: false; status: number | null; message: string };

/**
 * The server and token to read with: `--server`/`--token` when given, else the
 * environment exactly as `baton push` reads it. Reading needs packets:read.
 */
export function pullTarget(options: ServerOptions = {}, env: NodeJS.ProcessEnv = process.env): PushTarget {
  const token = options.token ?? env.BATON_TOKEN ?? "";
  if (!token) {
    throw new Error(
      "Pass --token or set BATON_TOKEN to an API token with the packets:read scope (`baton token create --scope packets:read`).",
    );
  }
  return pushTargetFromEnv({ ...env, BATON_URL: options.server ?? env.BATON_URL, BATON_TOKEN: token });
}

export function handoffUrl(target: PushTarget, threadKey: string): string {
  return `${target.url}/api/v1/threads/${encodeURIComponent(threadKey)}/handoff`;
}

function describeFailure(error: unknown): string {
  const { message, cause } = error as { message?: string; cause?: { message?: string } };
  return cause?.message ? `${message} (${cause.message})` : String(message ?? error);
}

/** GET /api/v1/threads/{key}/handoff. Never throws: a failure is an outcome with the server's message. */
export async function pullHandoff(target: PushTarget, threadKey: string): Promise<PullOutcome> {
  const url = handoffUrl(target, threadKey);
  let response: Response;
  let text: string;
  try {
    response = await (target.fetch ?? fetch)(url, { headers: { authorization: `Bearer ${target.token}`, accept: "application/json" } });
  } catch (error) {
    return { ok: false, status: null, message: `cannot reach ${target.url}: ${describeFailure(error)}` };
  }
  try {
    text = await response.text();
  } catch (error) {
    return { ok: false, status: response.status, message: `cannot read the answer from ${target.url}: ${describeFailure(error)}` };
  }
  let payload: unknown = null;
  try {
    payload = JSON.parse(text);
  } catch {
    // Reported below: a packet must be JSON, an error body should be.
  }
  const isObject = typeof payload === "object" && payload !== null && !Array.isArray(payload);
  if (response.status === 200) {
    if (!isObject) return { ok: false, status: 200, message: `${target.url} answered with something other than a JSON packet` };
    return {
      ok: true,
      packetId: response.headers.get("baton-packet-id"),
      etag: response.headers.get("etag"),
      packet: payload as Record<string, unknown>,
    };
  }
  const error = isObject ? ((payload as { error?: { message?: unknown } }).error ?? null) : null;
  let message = typeof error?.message === "string" ? error.message : `HTTP ${response.status}`;
  // Baton names the thread; an answer from something else (or an old Baton) may not.
  if (response.status === 404 && !message.includes(threadKey)) message = `thread "${threadKey}" not found: ${message}`;
  return { ok: false, status: response.status, message };
}

/** The packet as `baton pull` prints and writes it: 2-space indent and a final newline. */
export function formatPacket(packet: Record<string, unknown>): string {
  return `${JSON.stringify(packet, null, 2)}\n`;
}
