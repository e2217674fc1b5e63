import "server-only";
import type { PushTarget } from "../sync/push";

/**
 * The few reads the MCP tools make beyond `baton push` and `baton pull` (the board, a
 * version's markdown), through the same target: the same token, so the same scopes.
 */

export type ApiRead = { ok: true; text: string } | { ok: false; status: number | null; message: string };

export async function readApi(target: PushTarget, path: string, accept = "application/json"): Promise<ApiRead> {
  let response: Response;
  let text: string;
  try {
    response = await (target.fetch ?? fetch)(`${target.url}${path}`, { headers: { authorization: `Bearer ${target.token}`, accept } });
    text = await response.text();
  } catch (error) {
    return { ok: false, status: null, message: `cannot reach ${target.url}: ${(error as Error).message}` };
  }
  if (response.ok) return { ok: true, text };
  let message = `HTTP ${response.status}`;
  try {
    const payload = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof payload.error?.message === "string") message = payload.error.message;
  } catch {
    // Not Baton's error body: the status says enough.
  }
  return { ok: false, status: response.status, message };
}
