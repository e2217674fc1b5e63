import { z } from "zod";
import { defineRoute } from "@/lib/http/route";
import { renderHandoffMarkdown } from "@/lib/views/markdown/render-handoff";
import { loadPacket } from "@/lib/views/threads/flagged";
import { getHumanSection, getThreadDetail } from "@/lib/views/threads/queries";

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
    const [packet, human] = await Promise.all([loadPacket(thread.active_packet.id), getHumanSection(thread.active_packet.id)]);
    const markdown = renderHandoffMarkdown({ canonical: packet.canonical, flags: packet.flags, threadKey: thread.key, packetId: packet.id, human });
    return new Response(markdown, {
      headers: {
        "content-type": "text/markdown; charset=utf-8",
        "content-disposition": 'attachment; filename="handoff.md"',
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      },
    });
  },
});
