import { z } from "zod";
import { defineRoute } from "@/lib/http/route";
import { fileResponse } from "@/lib/http/respond";
import { storedPacketMarkdown } from "@/lib/views/markdown/stored-packet";
import { getThreadDetail } from "@/lib/views/threads/queries";

export const GET = defineRoute({
  method: "GET",
  path: "/threads/{key}/handoff.md",
  summary: "The thread page's download of handoff.md, rendered from the active packet's JSON (the one renderer).",
  auth: { kind: "reader" },
  params: z.object({ key: z.string() }),
  response: { kind: "download", status: 200, contentType: "text/markdown", description: "handoff.md, as an attachment" },
  errors: ["not_found"],
  handler: async ({ params }) => {
    const thread = await getThreadDetail(params.key);
    return fileResponse(await storedPacketMarkdown(thread.active_packet.id), { contentType: "text/markdown", filename: "handoff.md", disposition: "attachment" });
  },
});
