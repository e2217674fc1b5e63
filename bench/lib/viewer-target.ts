/**
 * What bench:viewers measures: this process serving the routes in-process (./viewer-server.ts),
 * or BENCH_INSTANCES production servers (`next start`, built into .next-bench when stale) on one
 * database, which also serve the board page to the Chromium viewers.
 */
import { serveRoutes } from "./viewer-server";
import { buildIfStale, cpuMs as processCpuMs, createPerson, DIST_DIR, memoryMiB, signIn, startServer, stopServer, type BenchPerson, type RunningServer } from "./server";
import { openStreamCount } from "../../lib/events/ledger-stream";

export interface ServerUnderTest {
  /** Where viewers and agents connect, one per instance. */
  bases: string[];
  /** CPU time of every server process so far, ms (SQLite included: it runs in them). */
  cpuMs(): number;
  /** RSS of every server process, bytes. */
  rssBytes(): number;
  /** Streams still open on the server, when it can tell (in-process only). */
  openStreams(): number;
  /** A session cookie for the board page, or null when the server serves no pages. */
  session(): Promise<{ name: string; value: string } | null>;
  what: string;
  /** The servers' last log lines (production servers only: in-process errors print here already). */
  logTail(): string;
  stop(): Promise<void>;
}

export async function inProcessServer(): Promise<ServerUnderTest> {
  const routes = await serveRoutes();
  return {
    bases: [routes.base],
    cpuMs: () => {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1000;
    },
    rssBytes: () => process.memoryUsage().rss,
    openStreams: openStreamCount,
    session: async () => null,
    what: "this process (the real route handlers behind node:http)",
    logTail: () => "",
    stop: routes.close,
  };
}

/** `count` production servers on ports firstPort, firstPort + 1, ... sharing the database at `url`. */
export async function nextServers(count: number, firstPort: number, url: string): Promise<ServerUnderTest> {
  const restored = buildIfStale();
  if (restored.length) console.log(`bench: put back ${restored.join(", ")} as before the build (next build points them at ${DIST_DIR})`);
  const servers: RunningServer[] = [];
  const ports = Array.from({ length: count }, (_, i) => firstPort + i);
  try {
    // BENCH_CPU_PROF_DIR: each server writes a V8 CPU profile there when it stops (node --cpu-prof).
    for (const port of ports) servers.push(await startServer(port, url, process.env.BENCH_CPU_PROF_DIR ?? null));
  } catch (error) {
    for (const server of servers) await stopServer(server);
    throw error;
  }
  const person: BenchPerson = { username: "bench-viewer", password: "bench-viewer-password-1", role: "viewer" };
  let cookie: { name: string; value: string } | null = null;
  const sum = (each: (server: RunningServer) => number) => servers.reduce((total, server) => total + each(server), 0);
  return {
    bases: ports.map((port) => `http://127.0.0.1:${port}`),
    cpuMs: () => sum((server) => processCpuMs(server.pid)),
    rssBytes: () => sum((server) => (memoryMiB(server.pid)?.rss ?? NaN) * 2 ** 20),
    openStreams: () => 0,
    session: async () => {
      if (!cookie) {
        createPerson(url, person);
        cookie = await signIn(ports[0]!, person);
      }
      return cookie;
    },
    logTail: () => servers.map((server, index) => `port ${ports[index]}:\n${server.logTail()}`).join("\n"),
    what: `${count} production server${count === 1 ? "" : "s"} (next start, pid ${servers.map((server) => server.pid).join(", ")}) on ports ${ports.join(", ")}`,
    stop: async () => {
      for (const server of servers) await stopServer(server);
    },
  };
}
