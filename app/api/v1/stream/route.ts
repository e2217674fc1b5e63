import { assertAllowedHost } from "@/lib/http/host-check";
import { errorResponse } from "@/lib/http/respond";
import { handleStreamRequest } from "@/lib/live/ledger-stream";

/**
 * GET /api/v1/stream: the ledger as server-sent events (format, cursor and
 * limits in lib/live/ledger-stream.ts; who may read it in lib/auth/read-access.ts).
 */
export async function GET(request: Request): Promise<Response> {
  try {
    assertAllowedHost(request);
  } catch (error) {
    return errorResponse(error);
  }
  return handleStreamRequest(request);
}
