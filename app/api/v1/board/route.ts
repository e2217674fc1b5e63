import { authoriseRead } from "@/lib/auth/read-access";
import { loadBoard } from "@/lib/board/board";
import { assertAllowedHost } from "@/lib/http/host-check";
import { errorResponse, jsonResponse } from "@/lib/http/respond";
import { parseQuery } from "@/lib/http/query";
import { threadFiltersSchema } from "@/lib/threads/filters";

/** GET /api/v1/board: every active thread placed in its column, with counts; the board's filters. */
export async function GET(request: Request): Promise<Response> {
  try {
    assertAllowedHost(request);
    await authoriseRead(request);
    return jsonResponse(await loadBoard(parseQuery(request, threadFiltersSchema)));
  } catch (error) {
    return errorResponse(error);
  }
}
