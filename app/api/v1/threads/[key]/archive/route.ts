import { z } from "zod";
import { archiveThread } from "@/lib/human/archive";
import { defineRoute } from "@/lib/http/route";

export const POST = defineRoute({
  method: "POST",
  path: "/api/v1/threads/{key}/archive",
  summary: "Archives the thread (off the board until a new packet re-opens it); `archived: false` when it already was.",
  auth: { kind: "person", role: "operator" },
  params: z.object({ key: z.string() }),
  body: { schema: z.strictObject({ reason: z.string().trim().min(1).max(200).optional() }), name: "archive" },
  response: { kind: "json", status: 200, schema: z.object({ archived: z.boolean() }) },
  errors: ["not_found"],
  handler: ({ person, params, body }) => archiveThread(person, params.key, body.reason ?? "archived by a person"),
});
