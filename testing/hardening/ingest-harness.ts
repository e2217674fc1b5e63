import { performance } from "node:perf_hooks";
import { POST } from "@/app/api/v1/packets/route";
import { createApiToken } from "../../lib/auth/tokens";
import { database } from "../../lib/db/client";

/**
 * For the hardening tests: sends bodies through the real POST /api/v1/packets
 * handler, in-process (HTTP semantics minus the socket), with a real token
 * against the test's database, and counts what each request stored.
 */

const ORIGIN = "http://baton.test";
const segment = { params: Promise.resolve({}) as Promise<Record<string, never>> };

export type Body = string | Uint8Array | ReadableStream<Uint8Array>;

export interface Sent {
  status: number;
  headers: Headers;
  json: unknown;
  /** PacketVersion, Thread and LedgerEvent rows added by this request. */
  added: { versions: number; threads: number; events: number };
  ms: number;
}

export async function createWriteToken(name = "hardening"): Promise<string> {
  return (await createApiToken(name, ["packets:write"])).token;
}

/** The three counts in one statement: send() takes them twice per request, and each Prisma query costs a compile (most of a fuzz run's CPU was three). */
export async function countRows(): Promise<{ versions: number; threads: number; events: number }> {
  const db = await database();
  const [row] = await db.$queryRaw<{ versions: bigint | number; threads: bigint | number; events: bigint | number }[]>`
    SELECT (SELECT COUNT(*) FROM "PacketVersion") AS versions, (SELECT COUNT(*) FROM "Thread") AS threads, (SELECT COUNT(*) FROM "LedgerEvent") AS events`;
  return { versions: Number(row!.versions), threads: Number(row!.threads), events: Number(row!.events) };
}

export function packetRequest(token: string, body: Body, headers: Record<string, string> = {}): Request {
  const init: RequestInit & { duplex?: "half" } = {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    // Copied into a plain ArrayBuffer-backed view, which is what BodyInit takes.
    body: typeof body === "string" || body instanceof ReadableStream ? body : new Uint8Array(body),
  };
  if (body instanceof ReadableStream) init.duplex = "half";
  return new Request(`${ORIGIN}/api/v1/packets`, init);
}

/** Sends one request and says what it answered and stored. */
export async function send(request: Request): Promise<Sent> {
  const before = await countRows();
  const started = performance.now();
  const response = await POST(request, segment);
  const text = await response.text();
  const ms = performance.now() - started;
  const after = await countRows();
  let json: unknown = undefined;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return {
    status: response.status,
    headers: response.headers,
    json,
    ms,
    added: { versions: after.versions - before.versions, threads: after.threads - before.threads, events: after.events - before.events },
  };
}

export function errorCodeOf(json: unknown): string | undefined {
  const error = (json as { error?: { code?: unknown } } | null)?.error;
  return typeof error?.code === "string" ? error.code : undefined;
}

/** A body as a stream of `chunkSize`-byte chunks (no Content-Length: what chunked transfer looks like to the handler). */
export function streamOf(bytes: Uint8Array, chunkSize: number): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) {
        controller.close();
        return;
      }
      controller.enqueue(bytes.slice(offset, offset + chunkSize));
      offset += chunkSize;
    },
  });
}
