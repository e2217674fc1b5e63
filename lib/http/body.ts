import "server-only";
import type { z } from "zod";
import { parseInput } from "../core/parse-input";
import { BatonError } from "../core/errors";
import { config } from "../server/config";

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

export function assertJsonContentType(request: Request): void {
  const type = request.headers.get("content-type") ?? "";
  if (!JSON_TYPE.test(type)) {
    throw new BatonError(
      "unsupported_media_type",
      `Send JSON with Content-Type: application/json (got ${type ? `"${type.slice(0, 100)}"` : "none"}).`,
    );
  }
}

const MARKDOWN_TYPE = /^text\/(?:markdown|x-markdown)\s*(?:;|$)/i;

/** A packet body's format by its Content-Type: JSON, or a Markdown handoff; 415 otherwise. */
export function packetContentType(request: Request): "json" | "markdown" {
  const type = request.headers.get("content-type") ?? "";
  if (JSON_TYPE.test(type)) return "json";
  if (MARKDOWN_TYPE.test(type)) return "markdown";
  throw new BatonError(
    "unsupported_media_type",
    `Send a packet as JSON (Content-Type: application/json) or a Markdown handoff (Content-Type: text/markdown); got ${type ? `"${type.slice(0, 100)}"` : "none"}.`,
  );
}

function tooLarge(limit: number): BatonError {
  return new BatonError("payload_too_large", `The body is larger than ${limit} bytes.`, { limit_bytes: limit });
}

function tooSlow(what: string, ms: number): BatonError {
  return new BatonError("request_timeout", `The body ${what} ${ms} ms; send the whole body at once, without pauses.`, { timeout_ms: ms });
}

/** How long a body may take in all, and without a byte arriving (BATON_BODY_TIMEOUT_MS, BATON_BODY_IDLE_TIMEOUT_MS). */
export interface BodyDeadlines {
  totalMs: number;
  idleMs: number;
}

function configuredDeadlines(): BodyDeadlines {
  const settings = config();
  return { totalMs: settings.BATON_BODY_TIMEOUT_MS, idleMs: settings.BATON_BODY_IDLE_TIMEOUT_MS };
}

/**
 * Reads the body as UTF-8 text, counting bytes as they arrive, whatever
 * Content-Length says; stops reading (and cancels the stream) past `limit`,
 * and with 408 when the body is not complete within `deadlines.totalMs` or
 * sends nothing for `deadlines.idleMs` (a slow body must not hold the request).
 */
export async function readBodyText(
  request: Request,
  limit: number,
  deadlines: BodyDeadlines = configuredDeadlines(),
): Promise<{ text: string; bytes: number }> {
  const { buffer, bytes } = await readBodyBytes(request, limit, deadlines);
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(buffer), bytes };
  } catch {
    throw new BatonError("invalid_encoding", "The body is not valid UTF-8; send it encoded as UTF-8.");
  }
}

/** The body's bytes as sent, with the same limits: what a signature is computed over. */
export async function readBodyBytes(
  request: Request,
  limit: number,
  deadlines: BodyDeadlines = configuredDeadlines(),
): Promise<{ buffer: Buffer; bytes: number }> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  if (request.body) {
    const reader = request.body.getReader();
    const started = Date.now();
    for (;;) {
      const left = deadlines.totalMs - (Date.now() - started);
      const wait = Math.min(left, deadlines.idleMs);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), Math.max(wait, 0));
      });
      const next = await Promise.race([reader.read(), timedOut]).finally(() => clearTimeout(timer));
      if (next === "timeout") {
        // Not awaited: a stalled source may never finish cancelling.
        void reader.cancel().catch(() => undefined);
        throw left <= deadlines.idleMs ? tooSlow("took longer than", deadlines.totalMs) : tooSlow("sent nothing for", deadlines.idleMs);
      }
      const { done, value } = next;
      if (done) break;
      bytes += value.byteLength;
      if (bytes > limit) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge(limit);
      }
      chunks.push(value);
    }
  }
  return { buffer: Buffer.concat(chunks, bytes), bytes };
}

/** Bodies of people's actions are small; anything bigger is not one. */
export const ACTION_BODY_MAX_BYTES = 256 * 1024;

/** Reads a JSON body (415 when it is not JSON) and parses it with `schema` (400 naming each bad field). */
export async function readJsonBody<T extends z.ZodType>(request: Request, schema: T, what = "request body"): Promise<z.output<T>> {
  assertJsonContentType(request);
  const { text } = await readBodyText(request, ACTION_BODY_MAX_BYTES);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BatonError("invalid_json", "The body is not valid JSON.");
  }
  return parseInput(schema, value, what);
}
