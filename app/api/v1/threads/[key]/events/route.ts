import { readJsonBody } from "@/lib/http/body";
import { jsonResponse } from "@/lib/http/respond";
import { apiRoute } from "@/lib/http/route";
import { recordSessionEvent, sessionEventRequestSchema } from "@/lib/watchdog/session-events";

/**
 * POST /api/v1/threads/{key}/events (token scope events:write): an agent's
 * session reports session_started, heartbeat or session_ended. Answers 200
 * with the thread's column now; 404 until the thread has a packet.
 */
export const POST = apiRoute<{ key: string }>("events:write", async ({ request, params, token }) => {
  const report = await readJsonBody(request, sessionEventRequestSchema, "session event");
  return jsonResponse(await recordSessionEvent(params.key, report, { actor: `token:${token.name}` }));
});
