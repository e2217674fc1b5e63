import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import type { FromViewers, ToViewers } from "./viewer-clients";
import { GET as streamRoute } from "../../app/api/v1/stream/route";
import { GET as boardRoute } from "../../app/api/v1/board/route";
import { POST as packetsRoute } from "../../app/api/v1/packets/route";
import { POST as sessionEventsRoute } from "../../app/api/v1/threads/[key]/events/route";

/**
 * The server side of bench:viewers: the routes the board page and the agents use, served by
 * their real handlers behind node:http in this process, and the viewers' child process.
 */

type Handler = (request: Request, segment?: { params: Promise<Record<string, string>> }) => Promise<Response>;

/** The handler for a method and path, with its path parameters; null when the bench does not serve it. */
function routeFor(method: string, pathname: string): { handler: Handler; params: Record<string, string> } | null {
  if (method === "GET" && pathname === "/api/v1/stream") return { handler: streamRoute, params: {} };
  if (method === "GET" && pathname === "/api/v1/board") return { handler: boardRoute, params: {} };
  if (method === "POST" && pathname === "/api/v1/packets") return { handler: packetsRoute, params: {} };
  const events = /^\/api\/v1\/threads\/([^/]+)\/events$/.exec(pathname);
  if (method === "POST" && events) return { handler: sessionEventsRoute, params: { key: decodeURIComponent(events[1]!) } };
  return null;
}

async function readBody(incoming: IncomingMessage): Promise<Buffer | undefined> {
  if (incoming.method === "GET" || incoming.method === "HEAD") return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** GET stream and board, POST packets and session events, served by their real handlers. */
export function serveRoutes(): Promise<{ base: string; close: () => Promise<void> }> {
  const server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    void (async () => {
      const url = new URL(incoming.url ?? "/", `http://${incoming.headers.host}`);
      const route = routeFor(incoming.method ?? "GET", url.pathname);
      if (!route) {
        outgoing.writeHead(404).end();
        return;
      }
      const abort = new AbortController();
      outgoing.on("close", () => abort.abort());
      const headers = Object.entries(incoming.headers).flatMap(([name, value]) => (typeof value === "string" ? [[name, value] as [string, string]] : []));
      const body = await readBody(incoming);
      const request = new Request(url, { method: incoming.method, headers, body: body ? new Uint8Array(body) : undefined, signal: abort.signal });
      const response = await route.handler(request, { params: Promise.resolve(route.params) });
      outgoing.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) {
        try {
          for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) outgoing.write(chunk);
        } catch {
          // The viewer went away.
        }
      }
      outgoing.end();
    })().catch((error: unknown) => {
      console.error("bench: route failed", error);
      outgoing.destroy();
    });
  });
  // Longer than any pause between rows: a viewer's kept-alive connection is never closed under its next request.
  server.keepAliveTimeout = 120_000;
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({ base: `http://127.0.0.1:${port}`, close: () => new Promise((done) => (server.closeAllConnections(), server.close(() => done()))) });
    }),
  );
}

export type AskViewers = <M extends ToViewers>(message: M) => Promise<FromViewers>;

/** The viewers' process, and a way to ask it something and await its answer. */
export function startViewers(): { ask: AskViewers; pid: number; stop: () => void } {
  const script = fileURLToPath(new URL("./viewer-clients.ts", import.meta.url));
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", script], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const waiting: ((message: FromViewers) => void)[] = [];
  child.on("message", (message: FromViewers) => waiting.shift()?.(message));
  child.on("exit", (code) => {
    if (code) throw new Error(`bench: the viewers' process exited with ${code}`);
  });
  return {
    pid: child.pid!,
    ask: (message) =>
      new Promise((resolve) => {
        waiting.push(resolve);
        child.send(message);
      }),
    stop: () => child.kill(),
  };
}

/**
 * PostgreSQL cannot store U+0000 in text and the board's packets carry it among their hostile
 * characters (storing them there fails, as in bench:heartbeats): on PostgreSQL they are dropped.
 */
export function withoutNul<P extends { body: Record<string, unknown> }>(packet: P, dialect: "sqlite" | "postgresql"): P {
  if (dialect === "sqlite") return packet;
  return { ...packet, body: JSON.parse(JSON.stringify(packet.body).replaceAll("\\u0000", "")) as Record<string, unknown> };
}
