import { performance } from "node:perf_hooks";
import { POST } from "@/app/api/v1/packets/route";
import { createApiToken } from "../../lib/auth/tokens";
import { sqlExecutor } from "../../lib/db/client";
import { Prisma } from "../../lib/generated/prisma/client";

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

/**
 * The three counts in one statement: send() takes them twice per request. Straight to the
 * driver (sqlExecutor), not through Prisma's query pipeline: thousands of requests a run.
 */
export async function countRows(): Promise<{ versions: number; threads: number; events: number }> {
  const sql = await sqlExecutor();
  const [row] = await sql.query<{ versions: number; threads: number; events: number }>(Prisma.sql`
    SELECT (SELECT COUNT(*) FROM "PacketVersion") AS versions, (SELECT COUNT(*) FROM "Thread") AS threads, (SELECT COUNT(*) FROM "LedgerEvent") AS events`);
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
  const answered = await answer(request);
  const after = await countRows();
  return {
    ...answered,
    added: { versions: after.versions - before.versions, threads: after.threads - before.threads, events: after.events - before.events },
  };
}

/**
 * Sends one request and says what it answered, without counting rows: for requests sent
 * side by side (whose counts would mix), where the test reads what was stored itself.
 */
export async function answer(request: Request): Promise<Omit<Sent, "added">> {
  const started = performance.now();
  const response = await POST(request, segment);
  const text = await response.text();
  const ms = performance.now() - started;
  let json: unknown = undefined;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: response.status, headers: response.headers, json, ms };
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
