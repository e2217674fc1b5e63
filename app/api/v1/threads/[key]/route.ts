import { z } from "zod";
import { defineRoute } from "@/lib/http/route";
import { threadDetailDto } from "@/lib/views/threads/dto";
import { loadThreadDetail } from "@/lib/views/threads/flagged";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/threads/{key}",
  summary: "The thread's card and its version history (`key` URL-encoded).",
  auth: { kind: "reader" },
  params: z.object({ key: z.string() }),
  response: { kind: "json", status: 200, schema: threadDetailDto },
  errors: ["not_found"],
  handler: ({ params }) => loadThreadDetail(params.key),
});
