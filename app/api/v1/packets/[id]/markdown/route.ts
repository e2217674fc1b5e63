import { z } from "zod";
import { defineRoute } from "@/lib/http/route";
import { renderHandoffMarkdown } from "@/lib/views/markdown/render-handoff";
import { getPacket } from "@/lib/views/threads/queries";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/packets/{id}/markdown",
  summary: "One stored version as markdown, ready for a pull-request body.",
  auth: { kind: "reader" },
  params: z.object({ id: z.string() }),
  response: { kind: "markdown", status: 200, contentType: "text/markdown", description: "handoff.md, shown inline" },
  errors: ["not_found"],
  handler: async ({ params }) => {
    const packet = await getPacket(params.id);
    // People's decisions are not stored yet (a later issue); the human section joins the render then.
    const markdown = renderHandoffMarkdown({
      canonical: packet.canonical,
      flags: packet.flags,
      threadKey: packet.thread_key,
      packetId: packet.id,
      human: null,
    });
    return new Response(markdown, {
      status: 200,
      headers: {
        "content-type": "text/markdown; charset=utf-8",
        "content-disposition": 'inline; filename="handoff.md"',
        "cache-control": "no-store",
        // The body is agent-written text: a browser must never sniff it into HTML.
        "x-content-type-options": "nosniff",
      },
    });
  },
});
