import { readFile } from "node:fs/promises";

/** The HTTP client `baton push` (and `baton generate --push`) send packets with. */
export interface PushTarget {
  url: string;
  token: string;
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

export async function pushPacketText(target: PushTarget, body: string): Promise<PushOutcome> {
  let response: Response;
  try {
    response = await fetch(`${target.url}/api/v1/packets`, {
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
