import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SESSION_COOKIE } from "../../lib/auth/session-cookie";
import { isPostgresqlUrl, printableDatabaseUrl, sqliteFilePath } from "../../lib/server/config";
import { createOwnDatabase, databaseName, type OwnDatabase } from "./postgresql";

/** Setting up and tearing down the app under test: build, database, token, person, server. */

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const DIST_DIR = ".next-bench";
export const TSX = path.join(ROOT, "node_modules", ".bin", "tsx");
/** What lib/ needs to load outside Next (docs/decisions/039-server-only-modules.md). */
export const SERVER_CONDITION = "--conditions=react-server";
const NEXT_BIN = path.join(ROOT, "node_modules", "next", "dist", "bin", "next");
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;
const LOG_TAIL_LINES = 40;

export class SetupError extends Error {}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, what: string): string {
  const result = spawnSync(command, args, { cwd: ROOT, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (result.status !== 0) {
    throw new SetupError(`${what} failed (exit ${result.status ?? result.signal}):\n${result.stderr}${result.stdout}`.trim());
  }
  return result.stdout;
}

// `next build` rewrites tsconfig.json and next-env.d.ts to point at the build folder
// it writes; those files are shared with everyone else working in this checkout, and
// tsconfig.json is an input of build-if-stale's hash. Put them back as they were.
const FILES_NEXT_BUILD_REWRITES = ["tsconfig.json", "next-env.d.ts"];

/** Builds the app into DIST_DIR when its sources changed; returns the files it had to restore. */
export function buildIfStale(): string[] {
  const before = new Map(
    FILES_NEXT_BUILD_REWRITES.filter((file) => existsSync(path.join(ROOT, file))).map((file) => [
      file,
      readFileSync(path.join(ROOT, file), "utf8"),
    ]),
  );
  const result = spawnSync(TSX, ["scripts/build-if-stale.ts"], {
    cwd: ROOT,
    env: { ...process.env, BATON_DIST_DIR: DIST_DIR, NEXT_TELEMETRY_DISABLED: "1" },
    stdio: "inherit",
  });
  const restored: string[] = [];
  for (const [file, text] of before) {
    if (readFileSync(path.join(ROOT, file), "utf8") === text) continue;
    writeFileSync(path.join(ROOT, file), text);
    restored.push(file);
  }
  if (result.status !== 0) throw new SetupError(`the build failed (exit ${result.status ?? result.signal})`);
  return restored;
}

export interface BenchDatabase {
  url: string;
  dialect: "sqlite" | "postgresql";
  /** The SQLite file, or null for PostgreSQL. */
  sqliteFile: string | null;
  /** A folder this run created and must remove, or null. */
  tempDir: string | null;
  /** On PostgreSQL: the server as DATABASE_URL names it (for CREATE and DROP DATABASE) and the run's own database on it. */
  postgresql: { serverUrl: string; own: OwnDatabase } | null;
  /** What it is, for the output. */
  description: string;
}

/**
 * Where a run stores its data:
 * - DATABASE_URL=postgresql://...: a new database of the run's own on that server
 *   (baton_bench_<runId>, see postgresql.ts), dropped by cleanUpDatabase; the
 *   database the URL names is never written to;
 * - DATABASE_URL=file:... when `acceptSqliteFile`: that SQLite file, as it is;
 * - otherwise a fresh SQLite file in a new temp folder.
 */
export async function chooseDatabase(runId: string, acceptSqliteFile: boolean): Promise<BenchDatabase> {
  const given = process.env.DATABASE_URL ?? "";
  if (isPostgresqlUrl(given)) {
    const own = await createOwnDatabase(given, `baton_bench_${runId}`);
    console.log(
      `bench: PostgreSQL: created database ${own.name} on ${printableDatabaseUrl(given)} for this run only; it is DROPPED at the end ` +
        `(nothing else on that server is written to; ${databaseName(given)} is only where the run connects to create and drop it)`,
    );
    return { url: own.url, dialect: "postgresql", sqliteFile: null, tempDir: null, postgresql: { serverUrl: given, own }, description: `fresh PostgreSQL database ${own.name}` };
  }
  if (given && !given.startsWith("file:")) throw new SetupError("DATABASE_URL must be file:PATH (SQLite) or postgresql://... (a PostgreSQL server)");
  if (given && acceptSqliteFile) {
    const file = sqliteFilePath(given);
    return { url: given, dialect: "sqlite", sqliteFile: file, tempDir: null, postgresql: null, description: `SQLite file ${file} from DATABASE_URL` };
  }
  if (given) console.log(`bench: DATABASE_URL=${given} is ignored: this benchmark seeds a fresh SQLite file (or a fresh database on a postgresql:// server)`);
  return tempSqliteDatabase();
}

/** A fresh SQLite file in a new temp folder, whatever DATABASE_URL says; the caller removes `tempDir`. */
export function tempSqliteDatabase(): BenchDatabase & { sqliteFile: string; tempDir: string } {
  const tempDir = mkdtempSync(path.join(tmpdir(), "baton-bench-"));
  const file = path.join(tempDir, "baton.db");
  return { url: `file:${file}`, dialect: "sqlite", sqliteFile: file, tempDir, postgresql: null, description: `fresh SQLite in ${tempDir}` };
}

/** Removes what the run created (its temp folder, or its PostgreSQL database); says so loudly when it cannot. */
export async function cleanUpDatabase(database: BenchDatabase): Promise<void> {
  if (database.tempDir) rmSync(database.tempDir, { recursive: true, force: true });
  if (!database.postgresql) return;
  const { own, serverUrl } = database.postgresql;
  try {
    await own.drop();
    console.log(`bench: PostgreSQL: dropped database ${own.name}`);
  } catch (error) {
    console.log(
      `\n!!! could not drop the benchmark's database ${own.name} on ${printableDatabaseUrl(serverUrl)}: ${error instanceof Error ? error.message : String(error)}` +
        `\n!!! drop it by hand: DROP DATABASE "${own.name}" WITH (FORCE);`,
    );
  }
}

export function migrate(url: string): string {
  return run(TSX, [SERVER_CONDITION, "scripts/migrate.ts"], { ...process.env, DATABASE_URL: url }, "migration").trim();
}

/** An API token with `scope` (packets:write unless told), created with the CLI. */
export function createToken(url: string, name: string, scope = "packets:write"): string {
  const out = run(
    process.execPath,
    ["bin/baton.js", "token", "create", "--name", name, "--scope", scope],
    { ...process.env, DATABASE_URL: url },
    "token creation",
  );
  const token = out.trim().split("\n").pop() ?? "";
  if (!/^btn_\S+$/.test(token)) throw new SetupError(`token creation printed no token: ${JSON.stringify(out)}`);
  return token;
}

/** Someone to sign in as: pages need a signed-in person. */
export interface BenchPerson {
  username: string;
  password: string;
  role: "viewer" | "operator" | "admin";
}

/** A person created with the CLI (`baton user create`); the password goes in BATON_PASSWORD, never in argv. */
export function createPerson(url: string, person: BenchPerson): void {
  const out = run(
    process.execPath,
    ["bin/baton.js", "user", "create", person.username, "--role", person.role],
    { ...process.env, DATABASE_URL: url, BATON_PASSWORD: person.password },
    "user creation",
  );
  if (out.trim() !== `created ${person.username} (${person.role})`) {
    throw new SetupError(`user creation printed something unexpected: ${JSON.stringify(out)}`);
  }
}

/**
 * Signs in through POST /api/v1/session, as the sign-in page does (with this
 * server's Origin); returns the session cookie's value.
 */
export async function signIn(port: number, person: BenchPerson): Promise<{ name: string; value: string }> {
  const origin = `http://127.0.0.1:${port}`;
  let response: Response;
  try {
    response = await fetch(`${origin}/api/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json", origin },
      body: JSON.stringify({ username: person.username, password: person.password }),
      redirect: "manual",
    });
  } catch (error) {
    throw new SetupError(`sign-in as ${person.username} failed: ${(error as Error).message}`);
  }
  const body = await response.text();
  if (response.status !== 200) throw new SetupError(`sign-in as ${person.username} answered HTTP ${response.status}: ${body.slice(0, 300)}`);
  for (const cookie of response.headers.getSetCookie()) {
    const [pair = ""] = cookie.split(";");
    const at = pair.indexOf("=");
    if (at > 0 && pair.slice(0, at).trim() === SESSION_COOKIE && pair.slice(at + 1).trim()) {
      return { name: SESSION_COOKIE, value: pair.slice(at + 1).trim() };
    }
  }
  throw new SetupError(`sign-in as ${person.username} set no ${SESSION_COOKIE} cookie (Set-Cookie: ${JSON.stringify(response.headers.getSetCookie())})`);
}

export interface RunningServer {
  child: ChildProcess;
  /** The next-server process itself: we start Next's bin with node, not through npx. */
  pid: number;
  logTail: () => string;
}

function isPortTaken(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

function healthOk(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get({ host: "127.0.0.1", port, path: "/api/v1/health", timeout: 2000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on("timeout", () => request.destroy());
    request.on("error", () => resolve(false));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts `next start` on 127.0.0.1:port and waits for /api/v1/health.
 * `cpuProfileDir` adds --cpu-prof to the server's node (written when it exits).
 */
export async function startServer(port: number, databaseUrl: string, cpuProfileDir: string | null): Promise<RunningServer> {
  // Otherwise the health check below could be answered by somebody else's server.
  if (await isPortTaken(port)) throw new SetupError(`port ${port} is already in use on 127.0.0.1`);
  const nodeFlags = cpuProfileDir ? ["--cpu-prof", `--cpu-prof-dir=${cpuProfileDir}`] : [];
  const child = spawn(process.execPath, [...nodeFlags, NEXT_BIN, "start", "-p", String(port), "-H", "127.0.0.1"], {
    cwd: ROOT,
    // All clients share one token: a per-token limit that never bites, so that the bench measures capacity (decision 021).
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      BATON_DIST_DIR: DIST_DIR,
      NEXT_TELEMETRY_DISABLED: "1",
      NODE_ENV: "production",
      BATON_RATE_LIMIT_PER_MINUTE: process.env.BATON_RATE_LIMIT_PER_MINUTE ?? "100000000",
      BATON_RATE_LIMIT_BURST: process.env.BATON_RATE_LIMIT_BURST ?? "1000000",
      // Every bench person signs in from 127.0.0.1 (decision 029).
      BATON_SIGN_IN_PER_MINUTE: process.env.BATON_SIGN_IN_PER_MINUTE ?? "0",
      BATON_SIGN_IN_GLOBAL_PER_MINUTE: process.env.BATON_SIGN_IN_GLOBAL_PER_MINUTE ?? "0",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    lines.splice(0, Math.max(0, lines.length - LOG_TAIL_LINES));
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const server: RunningServer = { child, pid: child.pid ?? -1, logTail: () => lines.join("\n") };

  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new SetupError(`the server exited while starting (${child.exitCode ?? child.signalCode}):\n${server.logTail()}`);
    }
    if (await healthOk(port)) return server;
    await sleep(200);
  }
  await stopServer(server);
  throw new SetupError(`the server did not answer /api/v1/health within ${START_TIMEOUT_MS / 1000} s:\n${server.logTail()}`);
}

function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** SIGTERM (Next closes and exits, writing any CPU profile), then SIGKILL if it hangs. */
export async function stopServer(server: RunningServer): Promise<void> {
  if (await exited(server.child, 0)) return;
  server.child.kill("SIGTERM");
  if (await exited(server.child, STOP_TIMEOUT_MS)) return;
  server.child.kill("SIGKILL");
  await exited(server.child, STOP_TIMEOUT_MS);
}

/** VmRSS and VmHWM (peak) of a process, in MiB, from /proc/<pid>/status. */
export function memoryMiB(pid: number): { rss: number; peak: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
    return { rss: kib("VmRSS") / 1024, peak: kib("VmHWM") / 1024 };
  } catch {
    return null;
  }
}

const CLOCK_TICKS_PER_SECOND = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout) || 100;

/** User + system CPU time a process has used so far, in ms, from /proc/<pid>/stat. */
export function cpuMs(pid: number): number {
  try {
    // Fields after the command name (which may hold spaces) start at field 3; utime and stime are 14 and 15.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/** CPU time all processes on the machine have used so far (busy, not idle), in ms, from /proc/stat. */
export function machineBusyMs(): number {
  try {
    // "cpu user nice system idle iowait irq softirq steal ...": everything but idle and iowait.
    const [user, nice, system, , , irq, softirq, steal] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    return (((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}
