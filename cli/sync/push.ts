import "server-only";
import { readFile } from "node:fs/promises";

/** The HTTP client `baton push` (and `baton generate --push`) send packets with. */
export interface PushTarget {
  url: string;
  token: string;
  /** How requests are sent; the global fetch when absent (the MCP route answers in-process: app/api/v1/mcp/route.ts). */
  fetch?: typeof fetch;
}

export type PushOutcome =
  | { ok: true; status: number; packetId: string; threadKey: string; duplicate: boolean; flags: string[] }
  | { ok: false; status: number | null; message: string };

export function pushTargetFromEnv(env: NodeJS.ProcessEnv = process.env): PushTarget {
  const url = (env.BATON_URL ?? "http://localhost:3000").replace(/\/+$/, "");
  const token = env.BATON_TOKEN ?? "";
  if (!token) throw new Error("Set BATON_TOKEN to an API token with the packets:write scope (`baton token create`).");
  return { url, token };
}

/**
 * How `baton push` waits out a 429 (a token over its rate limit, decision 021) or a
 * 503 (another process held the database's write lock too long): nothing was stored,
 * so sending again is safe (and content stored meanwhile would answer "duplicate").
 */
export interface PushRetry {
  /** Sends again after a 429 or 503 at most this many times. */
  retries: number;
  /** Longest wait honoured per retry (a longer Retry-After fails the packet instead). */
  maxWaitSeconds: number;
  sleep: (ms: number) => Promise<void>;
}

const RETRIED_STATUSES = new Set([429, 503]);

const DEFAULT_RETRY: PushRetry = {
  retries: 5,
  maxWaitSeconds: 60,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export async function pushPacketText(target: PushTarget, body: string, retry: PushRetry = DEFAULT_RETRY): Promise<PushOutcome> {
  let response: Response;
  for (let attempt = 0; ; attempt++) {
    try {
      response = await (target.fetch ?? fetch)(`${target.url}/api/v1/packets`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${target.token}`,
          "content-type": "application/json",
          "baton-source": "cli",
        },
        body,
      });
    } catch (error) {
      return { ok: false, status: null, message: `cannot reach ${target.url}: ${(error as Error).message}` };
    }
    if (!RETRIED_STATUSES.has(response.status) || attempt >= retry.retries) break;
    const header = response.headers.get("retry-after") ?? "";
    const wait = /^\d+$/.test(header.trim()) ? Math.max(1, Number(header.trim())) : 1;
    if (wait > retry.maxWaitSeconds) break;
    await response.body?.cancel().catch(() => undefined);
    await retry.sleep(wait * 1000);
  }
  const payload = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  if (response.status === 200 || response.status === 201) {
    return {
      ok: true,
      status: response.status,
      packetId: String(payload?.packet_id),
      threadKey: String(payload?.thread_key),
      duplicate: payload?.duplicate === true,
      flags: Array.isArray(payload?.flags) ? payload.flags.map((flag) => String((flag as { code?: unknown }).code)) : [],
    };
  }
  const error = payload?.error as { message?: string } | undefined;
  return { ok: false, status: response.status, message: error?.message ?? `HTTP ${response.status}` };
}

export async function pushPacketFile(target: PushTarget, file: string): Promise<PushOutcome> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    return { ok: false, status: null, message: `cannot read: ${(error as Error).message}` };
  }
  return pushPacketText(target, text);
}
