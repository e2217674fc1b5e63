import { handleStreamRequest } from "@/lib/live/ledger-stream";

/**
 * GET /api/v1/stream: the ledger as server-sent events (format, cursor and
 * limits in lib/live/ledger-stream.ts; who may read it in lib/auth/read-access.ts).
 */
export const GET = handleStreamRequest;
