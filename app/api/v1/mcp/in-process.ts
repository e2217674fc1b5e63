import "server-only";
import type { DefinedRoute } from "@/lib/http/route";
import { GET as getBoard } from "../board/route";
import { GET as getMarkdown } from "../packets/[id]/markdown/route";
import { POST as postPackets } from "../packets/route";
import { GET as getHandoff } from "../threads/[key]/handoff/route";

/**
 * The requests the MCP tools make (cli/mcp/tools.ts), answered by Baton's own route
 * handlers in this process: the same authentication, scopes, token projects, limits
 * and answers as over the network, without a network hop back to this server.
 */
const ROUTES: { method: string; pattern: RegExp; param: string | null; handler: DefinedRoute }[] = [
  { method: "POST", pattern: /^\/api\/v1\/packets$/, param: null, handler: postPackets },
  { method: "GET", pattern: /^\/api\/v1\/threads\/([^/]+)\/handoff$/, param: "key", handler: getHandoff },
  { method: "GET", pattern: /^\/api\/v1\/board$/, param: null, handler: getBoard },
  { method: "GET", pattern: /^\/api\/v1\/packets\/([^/]+)\/markdown$/, param: "id", handler: getMarkdown },
];

/** Headers of the MCP request that the inner ones keep: where it came from (host checks, rate limits, audit). */
const CARRIED_HEADERS = /^(host|x-forwarded-.*|forwarded|x-baton-client-address|user-agent)$/i;

/** A fetch for the tools of one MCP request: `outer` is that request (its origin, its client, its lifetime). */
export function inProcessFetch(outer: Request): typeof fetch {
  return async (input, init) => {
    const inner = new Request(input, init);
    const url = new URL(inner.url);
    const route = ROUTES.find((entry) => entry.method === inner.method && entry.pattern.test(url.pathname));
    if (!route) throw new Error(`${inner.method} ${url.pathname} is not one of the routes the MCP tools use`);
    const headers = new Headers(inner.headers);
    for (const [name, value] of outer.headers) if (CARRIED_HEADERS.test(name)) headers.set(name, value);
    const signal = AbortSignal.any([inner.signal, outer.signal]);
    const request = new Request(url, { method: inner.method, headers, body: inner.body, signal, duplex: "half" } as RequestInit);
    const match = route.pattern.exec(url.pathname)!;
    const params = route.param ? { [route.param]: decodeURIComponent(match[1]!) } : {};
    return route.handler(request, { params: Promise.resolve(params) });
  };
}
