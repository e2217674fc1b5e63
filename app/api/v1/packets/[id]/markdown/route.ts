import { z } from "zod";
import { defineRoute } from "@/lib/http/route";
import { fileResponse } from "@/lib/http/respond";
import { storedPacketMarkdown } from "@/lib/views/markdown/stored-packet";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/packets/{id}/markdown",
  summary: "One stored version as markdown, ready for a pull-request body.",
  auth: { kind: "reader" },
  params: z.object({ id: z.string() }),
  response: { kind: "markdown", status: 200, contentType: "text/markdown", description: "handoff.md, shown inline" },
  errors: ["not_found"],
  handler: async ({ params }) => fileResponse(await storedPacketMarkdown(params.id), { contentType: "text/markdown", filename: "handoff.md", disposition: "inline" }),
});
