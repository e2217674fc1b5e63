import { randomBytes } from "node:crypto";
import { expect, type APIRequestContext, type APIResponse } from "@playwright/test";
import { BATCH_MAX_PACKETS } from "../../lib/contract/schema";
import type { IngestResult } from "../../lib/ingest/ingest";
import type { PacketDto, ThreadDetailDto } from "../../lib/views/threads/dto";

export type { IngestResult, PacketDto, ThreadDetailDto };
export type { ThreadCardDto, ThreadListDto } from "../../lib/views/threads/dto";

/** A value no other test (or earlier run) uses: specs own their data and do not depend on order. */
export function uniqueId(label: string): string {
  return `${label}-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export const threadPath = (key: string, suffix = "") => `/api/v1/threads/${encodeURIComponent(key)}${suffix}`;

/**
 * POST /api/v1/packets. Bodies go out as bytes: given a string that is not
 * valid JSON, Playwright would re-encode it as a JSON string.
 */
export function postPacket(
  request: APIRequestContext,
  token: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<APIResponse> {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body), "utf8");
  return request.post("/api/v1/packets", {
    headers: { ...bearer(token), "content-type": "application/json", ...headers },
    data: bytes,
  });
}

/** Posts a packet that must be stored as a new version; returns the ingest answer. */
export async function storePacket(request: APIRequestContext, token: string, body: unknown): Promise<IngestResult> {
  const response = await postPacket(request, token, body);
  expect(response.status(), await response.text()).toBe(201);
  const result = (await response.json()) as IngestResult;
  expect(result.duplicate).toBe(false);
  return result;
}

/**
 * Posts packets as batches `{"packets": [...]}` (one request per BATCH_MAX_PACKETS: one commit each instead of
 * one per packet), each of which must be stored as a new version; returns the answers in order.
 * For seeding a spec whose subject is not ingest itself.
 */
export async function storePackets(request: APIRequestContext, token: string, bodies: unknown[]): Promise<IngestResult[]> {
  const results: IngestResult[] = [];
  for (let start = 0; start < bodies.length; start += BATCH_MAX_PACKETS) {
    const response = await postPacket(request, token, { packets: bodies.slice(start, start + BATCH_MAX_PACKETS) });
    const text = await response.text();
    expect(response.status(), text).toBe(207);
    const items = (JSON.parse(text) as { results: (IngestResult & { index: number; status: number })[] }).results;
    for (const item of items) {
      expect(item.status, JSON.stringify(item)).toBe(201);
      expect(item.duplicate).toBe(false);
      results.push({ packet_id: item.packet_id, thread_key: item.thread_key, flags: item.flags, duplicate: item.duplicate, active: item.active });
    }
  }
  expect(results).toHaveLength(bodies.length);
  return results;
}

export interface ErrorBody {
  code: string;
  message: string;
  details: unknown;
}

/** Every error answer is JSON `{error: {code, message, details}}` and nothing else. */
export function expectErrorShape(body: unknown, code: string): ErrorBody {
  expect(Object.keys(body as object)).toEqual(["error"]);
  const error = (body as { error: ErrorBody }).error;
  expect(Object.keys(error).sort()).toEqual(["code", "details", "message"]);
  expect(error.code).toBe(code);
  expect(typeof error.message).toBe("string");
  expect(error.message.length).toBeGreaterThan(0);
  return error;
}

export async function expectError(response: APIResponse, status: number, code: string): Promise<ErrorBody> {
  const text = await response.text();
  expect(response.status(), text).toBe(status);
  expect(response.headers()["content-type"]).toMatch(/^application\/json/);
  return expectErrorShape(JSON.parse(text), code);
}

/** GET with a token, expecting 200 and JSON. */
export async function getJson<T>(request: APIRequestContext, token: string, url: string): Promise<T> {
  const response = await request.get(url, { headers: bearer(token) });
  expect(response.status(), `${url}: ${await response.text()}`).toBe(200);
  return (await response.json()) as T;
}

/** The thread's detail, or null while it does not exist (404). */
export async function findThread(request: APIRequestContext, token: string, key: string): Promise<ThreadDetailDto | null> {
  const response = await request.get(threadPath(key), { headers: bearer(token) });
  if (response.status() === 404) return null;
  expect(response.status(), await response.text()).toBe(200);
  return (await response.json()) as ThreadDetailDto;
}

/** A complete packet in the contract's canonical shapes, on its own thread. */
export function packetFor(thread: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    thread,
    summary: `e2e packet for ${thread}`,
    changed_files: ["src/index.ts"],
    commands_run: [{ command: "npm test", exit_code: 0 }],
    failed_attempts: [],
    open_risks: [{ severity: "low", detail: `minor risk of ${thread}` }],
    next_action: `continue ${thread}`,
    verdict_pointer: { verdict: "outputs/verification/T-1.json" },
    ...overrides,
  };
}
