import "server-only";
import { readFile } from "node:fs/promises";
import { preparePacket } from "../../lib/contract/prepare";
import { REPORT_MAX_BYTES, REPORTS_MAX, REPORTS_MAX_TOTAL_BYTES } from "../../lib/contract/attached-reports";
import { workspaceRootOf } from "../../lib/ingest/watch/workspace-root";
import { readReportToSend } from "../../lib/views/verdict/read";
import type { PushTarget } from "./target";

export { pushTargetFromEnv, type PushTarget } from "./target";

/** The HTTP client `baton push` (and `baton generate --push`) send packets with. */
export type PushOutcome =
  | {
      ok: true;
      status: number;
      packetId: string;
      threadKey: string;
      duplicate: boolean;
      flags: string[];
      /** When the server computed the flags (the same the board shows). */
      flagsComputedAt: string | null;
      /** The verdict reports sent with the packet. */
      reportsSent: number;
    }
  | { ok: false; status: number | null; message: string };

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

export async function pushPacketText(
  target: PushTarget,
  body: string,
  retry: PushRetry = DEFAULT_RETRY,
  reportsSent = 0,
): Promise<PushOutcome> {
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
      flagsComputedAt: typeof payload?.flags_computed_at === "string" ? payload.flags_computed_at : null,
      reportsSent,
    };
  }
  const error = payload?.error as { message?: string } | undefined;
  return { ok: false, status: response.status, message: error?.message ?? `HTTP ${response.status}` };
}

export async function pushPacketFile(target: PushTarget, file: string, retry: PushRetry = DEFAULT_RETRY): Promise<PushOutcome> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    return { ok: false, status: null, message: `cannot read: ${(error as Error).message}` };
  }
  const envelope = await withReports(text, file);
  return envelope ? pushPacketText(target, envelope.body, retry, envelope.sent) : pushPacketText(target, text, retry);
}

/**
 * The packet with the reports its relative verdict pointers name, read inside its workspace
 * root (the folder holding `outputs/`, as the watcher records) with the server's checks, so
 * its verdict reaches Baton whatever way the packet arrives (decision 051). Null when there
 * is nothing to send: the file is sent as it is (and the server says what is wrong with it).
 */
async function withReports(text: string, file: string): Promise<{ body: string; sent: number } | null> {
  let packet: Record<string, unknown>;
  let pointers: readonly { ref: string }[];
  try {
    packet = JSON.parse(text) as Record<string, unknown>;
    pointers = preparePacket(packet, Date.now()).canonical.verdict_pointer ?? [];
  } catch {
    return null;
  }
  const root = workspaceRootOf(file);
  const reports: { ref: string; report: unknown }[] = [];
  let total = 0;
  for (const { ref } of pointers.slice(0, REPORTS_MAX)) {
    if (reports.some((report) => report.ref === ref)) continue;
    const read = await readReportToSend(root, ref, REPORT_MAX_BYTES);
    if (!read.ok) continue;
    const bytes = Buffer.byteLength(JSON.stringify(read.json));
    // The server redacts and counts again; a report it would refuse for size is left out here.
    if (bytes > REPORT_MAX_BYTES || total + bytes > REPORTS_MAX_TOTAL_BYTES) continue;
    total += bytes;
    reports.push({ ref, report: read.json });
  }
  if (!reports.length) return null;
  return { body: JSON.stringify({ packet, reports }), sent: reports.length };
}

/** What `baton push` and `baton generate --push` print after a stored packet: its flags, as the board shows them, and when. */
export function describePushed(outcome: Extract<PushOutcome, { ok: true }>): string {
  const flags = outcome.flags.length ? ` flags=${outcome.flags.join(",")}` : "";
  const at = outcome.flagsComputedAt ? ` flags_at=${outcome.flagsComputedAt}` : "";
  const reports = outcome.reportsSent ? ` reports=${outcome.reportsSent}` : "";
  return `${flags}${at}${reports}`;
}
