import { authoriseRead } from "@/lib/auth/read-access";
import { errorResponse } from "@/lib/http/respond";
import { getMergedHandoff } from "@/lib/threads/queries";

/** The thread page's download of the merged handoff.json. */
export async function GET(request: Request, { params }: { params: Promise<{ key: string }> }): Promise<Response> {
  try {
    await authoriseRead(request);
    const { body } = await getMergedHandoff((await params).key);
    return new Response(`${JSON.stringify(body, null, 2)}\n`, {
      headers: {
        "content-type": "application/json; charset=utf-8",
        "content-disposition": 'attachment; filename="handoff.json"',
        "cache-control": "no-store",
      },
    });
  } catch (error) {
    return errorResponse(error);
  }
}
