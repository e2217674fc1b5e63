import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { createBatonMcpServer } from "@/cli/mcp/tools";
import { ACTION_BODY_MAX_BYTES, assertJsonContentType, readBodyText } from "@/lib/http/body";
import { JSON_MAX_DEPTH, PACKET_MAX_BYTES } from "@/lib/contract/schema";
import { parseJsonText } from "@/lib/contract/validate";
import { defineRoute } from "@/lib/http/route";
import { inProcessFetch } from "./in-process";

/** A `handoff` call carries a whole packet, plus the JSON-RPC envelope around it. */
const MCP_BODY_MAX_BYTES = PACKET_MAX_BYTES + ACTION_BODY_MAX_BYTES;
/** The packet sits three levels down: params.arguments.packet. */
const MCP_JSON_MAX_DEPTH = JSON_MAX_DEPTH + 3;

/**
 * Baton's MCP tools over Streamable HTTP, stateless: each POST gets its own server
 * and transport. Every tool calls Baton's routes in-process with the caller's token
 * (./in-process.ts), so the scopes each tool needs are those routes' own.
 */
export const POST = defineRoute({
  method: "POST",
  path: "/api/v1/mcp",
  summary: "The MCP tools of `baton mcp` over Streamable HTTP (stateless); each tool needs the scopes of the routes it calls (docs/integrations.md#mcp).",
  auth: { kind: "token", scope: "packets:read" },
  headers: { Accept: "application/json, text/event-stream (both, as the MCP transport requires)" },
  body: { raw: `one JSON-RPC message or a batch, at most ${MCP_BODY_MAX_BYTES} bytes` },
  response: {
    kind: "stream",
    status: 200,
    contentType: "text/event-stream",
    description: "the JSON-RPC answers as server-sent events (progress while a tool waits); 202 without a body for notifications",
  },
  errors: ["unsupported_media_type", "payload_too_large", "request_timeout", "invalid_json", "json_too_deep"],
  handler: async ({ request }) => {
    assertJsonContentType(request);
    const { text } = await readBodyText(request, MCP_BODY_MAX_BYTES);
    const parsedBody = parseJsonText(text, MCP_JSON_MAX_DEPTH);
    const token = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "")![1]!;
    const origin = new URL(request.url).origin;
    const server = createBatonMcpServer({ url: origin, token, fetch: inProcessFetch(request) });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    // A client that goes away ends its tool's wait (the tools' extra.signal).
    request.signal.addEventListener("abort", () => void server.close(), { once: true });
    const response = await transport.handleRequest(request, { parsedBody });
    if (response.status === 202 && !response.body) {
      // A notification: nothing to answer, in the declared type so the route's check passes.
      return new Response(null, { status: 202, headers: { "content-type": "text/event-stream", "cache-control": "no-store" } });
    }
    return response;
  },
});
