import { z } from "zod";
import { defineRoute, type HttpMethod } from "@/lib/http/route";

/**
 * Answers without touching the database or the body. Load balancers probe it;
 * bench:ingest uses it as the empty-handler baseline. It alone skips the
 * BATON_ALLOWED_HOSTS check: probes use an address, and it tells nothing (decision 030).
 */
const healthy = (method: HttpMethod) =>
  defineRoute({
    method,
    path: "/api/v1/health",
    summary: "`{\"ok\": true}`, without touching the database or reading the body; any Host (load balancers probe by address).",
    auth: { kind: "public" },
    anyHost: true,
    response: { kind: "json", status: 200, schema: z.object({ ok: z.literal(true) }) },
    handler: () => ({ ok: true as const }),
  });

export const GET = healthy("GET");
export const POST = healthy("POST");
