import { z } from "zod";
import { defineRoute } from "@/lib/http/route";
import { renderHandoffMarkdown } from "@/lib/views/markdown/render-handoff";
import { loadPacket } from "@/lib/views/threads/flagged";
import { getHumanSection } from "@/lib/views/threads/queries";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/packets/{id}/markdown",
  summary: "One stored version as markdown, ready for a pull-request body.",
  auth: { kind: "reader" },
  params: z.object({ id: z.string() }),
  response: { kind: "markdown", status: 200, contentType: "text/markdown", description: "handoff.md, shown inline" },
  errors: ["not_found"],
  handler: async ({ params }) => {
    // The flags the card shows (lib/board/flags.ts), as every view gives them.
    const packet = await loadPacket(params.id);
    const human = await getHumanSection(packet.id);
    const markdown = renderHandoffMarkdown({
      canonical: packet.canonical,
      flags: packet.flags,
      threadKey: packet.thread_key,
      packetId: packet.id,
      human,
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
