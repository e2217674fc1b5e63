import type { z } from "zod";

/** What a human action answered: the parsed result, a conflict with the current state, or an error to show. */
export type SendResult<T> =
  | { ok: true; data: T }
  | { ok: false; status: number; code: string; message: string; details: unknown };

/**
 * Sends a person's action to Baton as JSON (same origin, the session cookie
 * rides along) and checks the answer's shape. Never throws for an HTTP error:
 * the caller shows `message`, and a 409 carries the current state in `details`.
 */
export async function sendJson<T extends z.ZodType>(
  method: "POST" | "PATCH" | "DELETE",
  url: string,
  body: unknown,
  schema: T,
): Promise<SendResult<z.output<T>>> {
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { "content-type": "application/json", accept: "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
    });
  } catch {
    return { ok: false, status: 0, code: "network", message: "Baton could not be reached; check the connection and try again.", details: null };
  }
  const payload: unknown = response.status === 204 ? null : await response.json().catch(() => null);
  if (!response.ok) {
    const error = (payload as { error?: { code?: string; message?: string; details?: unknown } } | null)?.error;
    return {
      ok: false,
      status: response.status,
      code: error?.code ?? "http_error",
      message: error?.message ?? `Baton answered ${response.status}.`,
      details: error?.details ?? null,
    };
  }
  return { ok: true, data: schema.parse(payload) };
}
