import { authoriseRead } from "@/lib/auth/read-access";
import { errorResponse } from "@/lib/http/respond";
import { renderHandoffMarkdown } from "@/lib/markdown/render-handoff";
import { getPacket, getThreadDetail } from "@/lib/threads/queries";

/** The thread page's download of handoff.md, rendered from the active packet's JSON (the one renderer). */
export async function GET(request: Request, { params }: { params: Promise<{ key: string }> }): Promise<Response> {
  try {
    await authoriseRead(request);
    const thread = await getThreadDetail((await params).key);
    const packet = await getPacket(thread.active_packet.id);
    const markdown = renderHandoffMarkdown({ canonical: packet.canonical, flags: packet.flags, threadKey: thread.key, packetId: packet.id, human: null });
    return new Response(markdown, {
      headers: {
        "content-type": "text/markdown; charset=utf-8",
        "content-disposition": 'attachment; filename="handoff.md"',
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      },
    });
  } catch (error) {
    return errorResponse(error);
  }
}
