import { z } from "zod";
import { defineRoute } from "@/lib/http/route";
import { recordSessionEvent, sessionEventRequestSchema, sessionEventResultDto } from "@/lib/board/watchdog/session-events";

export const POST = defineRoute({
  method: "POST",
  path: "/api/v1/threads/{key}/events",
  summary: "An agent's session reports session_started, heartbeat or session_ended; answers the thread's column now (404 until the thread has a packet).",
  auth: { kind: "token", scope: "events:write" },
  params: z.object({ key: z.string() }),
  body: { schema: sessionEventRequestSchema, name: "session event" },
  response: { kind: "json", status: 200, schema: sessionEventResultDto },
  errors: ["not_found"],
  handler: ({ params, body, token }) => recordSessionEvent(params.key, body, { actor: `token:${token.name}`, project: token.project }),
});
