import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { request as playwrightRequest, type APIRequestContext } from "@playwright/test";
import { createdTokenSchema } from "../../lib/auth/dto";
import type { Role } from "../../lib/auth/roles";
import { migrateDatabase } from "../../lib/db/migrate/index";

/**
 * A `next start` of the suite's production build that a spec owns: its own port,
 * database file and settings, started and killed by the spec (the overload, crash
 * and memory specs, the watchdog's quick-stale server, the PostgreSQL instances). The child is Next's own server process (node runs Next's bin
 * directly, like e2e/support/serve.ts), so its pid is the one to signal and to sample.
 */

const START_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 10_000;

export interface OwnServer {
  baseURL: string;
  port: number;
  child: ChildProcess;
  pid: number;
  /** Everything the server printed, for the failure message. */
  log: string[];
}

/** A free TCP port on the loopback interface. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** The `baton` CLI against a spec's own database (it migrates a fresh file before writing). */
export function batonCli(databaseUrl: string, args: string[], env: Record<string, string> = {}): string {
  return execFileSync(process.execPath, ["bin/baton.js", ...args], {
    env: { ...process.env, DATABASE_URL: databaseUrl, ...env },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();
}

/**
 * Migrates a spec's fresh database in this process, as `npm start` does before it serves.
 * People and tokens are then made over HTTP (ownAdmin, ownToken, ownPerson): a CLI process
 * for each cost about 1.5 s of CPU (docs/decisions/081-browser-phase-cpu.md).
 */
export async function migrateOwnDatabase(databaseUrl: string): Promise<void> {
  await migrateDatabase(databaseUrl);
}

/** Headers of a request from the server's own pages (human endpoints refuse other origins). */
const fromOwnPage = (server: OwnServer) => ({ origin: server.baseURL });

/**
 * The first admin of a spec's own server, made through first-run setup (from 127.0.0.1 it
 * needs no code), as a person's first visit makes it; an HTTP client signed in as them.
 */
export async function ownAdmin(server: OwnServer, admin: { username: string; password: string }): Promise<APIRequestContext> {
  const client = await playwrightRequest.newContext({ baseURL: server.baseURL, storageState: { cookies: [], origins: [] } });
  const response = await client.post("/api/v1/setup", { headers: fromOwnPage(server), data: admin });
  if (response.status() !== 201) throw new Error(`setting up ${admin.username}: ${response.status()} ${await response.text()}\n${logTail(server)}`);
  return client;
}

/** A new API token with `scopes`, made by the admin through the tokens API (as the tokens page does); its secret. */
export async function ownToken(server: OwnServer, admin: APIRequestContext, name: string, scopes: string[]): Promise<string> {
  const response = await admin.post("/api/v1/tokens", { headers: fromOwnPage(server), data: { name, scopes } });
  if (response.status() !== 201) throw new Error(`creating token ${name}: ${response.status()} ${await response.text()}`);
  return createdTokenSchema.parse(await response.json()).token;
}

/** A token for a spec whose own server needs no person: its first admin (ownAdmin) makes it. */
export async function ownAgentToken(server: OwnServer, name: string, scopes: string[]): Promise<string> {
  const admin = await ownAdmin(server, { username: `${name}-admin`, password: `${name} e2e password` });
  try {
    return await ownToken(server, admin, name, scopes);
  } finally {
    await admin.dispose();
  }
}

/** A person with `role`, made by the admin through the users API (as the users page does). */
export async function ownPerson(server: OwnServer, admin: APIRequestContext, person: { username: string; password: string; role: Role }): Promise<void> {
  const response = await admin.post("/api/v1/users", { headers: fromOwnPage(server), data: person });
  if (response.status() !== 201) throw new Error(`creating ${person.username}: ${response.status()} ${await response.text()}`);
}

/** The log's last lines, for a failure message. */
export const logTail = (server: OwnServer, lines = 40) => server.log.join("").split("\n").slice(-lines).join("\n");

/**
 * Starts the build in BATON_DIST_DIR (the one the suite built) on `port` against
 * `databaseUrl`, with `env` on top; resolves once /api/v1/health answers.
 */
export async function startOwnServer(options: { databaseUrl: string; port: number; env?: Record<string, string>; args?: string[] }): Promise<OwnServer> {
  const { databaseUrl, port } = options;
  const baseURL = `http://127.0.0.1:${port}`;
  const log: string[] = [];
  const child = spawn(process.execPath, ["node_modules/next/dist/bin/next", "start", "-p", String(port), "-H", "127.0.0.1", ...(options.args ?? [])], {
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      BATON_DIST_DIR: process.env.BATON_DIST_DIR ?? ".next",
      BATON_WATCH_DIRS: "",
      NEXT_TELEMETRY_DISABLED: "1",
      NODE_ENV: "production",
      ...options.env,
    },
  });
  child.stdout?.on("data", (chunk: Buffer) => log.push(chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => log.push(chunk.toString()));
  child.on("exit", (code, signal) => log.push(`[own-server] exited: code ${code}, signal ${signal}\n`));
  const server: OwnServer = { baseURL, port, child, pid: child.pid!, log };
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the spec's server exited (${child.exitCode ?? child.signalCode}):\n${logTail(server)}`);
    }
    const ok = await fetch(`${baseURL}/api/v1/health`, { signal: AbortSignal.timeout(2_000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return server;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the spec's server did not answer within ${START_TIMEOUT_MS} ms:\n${logTail(server)}`);
    }
    await sleep(200);
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/** SIGKILL, the way a crash or the OOM killer ends a process: no handler runs. Resolves once it is gone. */
export async function killOwnServer(server: OwnServer): Promise<void> {
  server.child.kill("SIGKILL");
  await exited(server.child);
}

/** A polite stop (SIGTERM), then SIGKILL if it lingers. */
export async function stopOwnServer(server: OwnServer | undefined): Promise<void> {
  if (!server) return;
  server.child.kill("SIGTERM");
  await Promise.race([exited(server.child), sleep(STOP_TIMEOUT_MS)]);
  if (server.child.exitCode === null && server.child.signalCode === null) await killOwnServer(server);
}

/** A process's resident memory now, in KiB (Linux /proc). */
export function residentKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]);
}

/** Whether `pid` has children: the spec's server must be Next itself, not a wrapper around it. */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
