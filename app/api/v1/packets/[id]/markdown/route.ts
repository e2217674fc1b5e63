import { readRoute } from "@/lib/http/route";
import { renderHandoffMarkdown } from "@/lib/markdown/render-handoff";
import { getPacket } from "@/lib/threads/queries";

/** GET /api/v1/packets/{id}/markdown: one stored version as markdown, ready for a pull-request body. */
export const GET = readRoute<{ id: string }>(async ({ params }) => {
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
});
