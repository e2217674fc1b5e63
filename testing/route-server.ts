import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A real HTTP server on 127.0.0.1 in front of Baton's route handlers, called in-process: for
 * clients that must speak HTTP (the MCP SDK, `baton` commands). A client that goes away aborts
 * the request's signal, as Next.js does; answers stream as they come (a tool's answer is a
 * server-sent event at the end of a long wait).
 */
export interface RouteServer {
  url: string;
  close(): Promise<void>;
}

export async function startRouteServer(handle: (request: Request) => Promise<Response>): Promise<RouteServer> {
  let url = "";
  const serve = async (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const gone = new AbortController();
    outgoing.on("close", () => {
      if (!outgoing.writableEnded) gone.abort();
    });
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const headers: [string, string][] = [];
    for (const [name, value] of Object.entries(incoming.headers)) if (value !== undefined) headers.push([name, String(value)]);
    const request = new Request(`${url}${incoming.url}`, { method: incoming.method ?? "GET", headers, signal: gone.signal, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) });
    const response = await handle(request);
    outgoing.writeHead(response.status, Object.fromEntries(response.headers));
    const reader = response.body?.getReader();
    for (let chunk = await reader?.read(); chunk && !chunk.done; chunk = await reader!.read()) outgoing.write(chunk.value);
    outgoing.end();
  };
  const server = createServer((incoming, outgoing) => void serve(incoming, outgoing));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
