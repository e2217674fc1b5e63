import { z } from "zod";
import { fileResponse } from "@/lib/http/respond";
import { defineRoute } from "@/lib/http/route";
import { getMergedHandoff } from "@/lib/views/threads/packet-reads";

export const GET = defineRoute({
  method: "GET",
  path: "/threads/{key}/handoff.json",
  summary: "The thread page's download of the merged handoff.json (2-space JSON).",
  auth: { kind: "reader" },
  params: z.object({ key: z.string() }),
  response: { kind: "download", status: 200, contentType: "application/json", description: "handoff.json, as an attachment" },
  errors: ["not_found"],
  handler: async ({ params }) => {
    const { body } = await getMergedHandoff(params.key);
    return fileResponse(`${JSON.stringify(body, null, 2)}\n`, { contentType: "application/json", filename: "handoff.json", disposition: "attachment" });
  },
});
