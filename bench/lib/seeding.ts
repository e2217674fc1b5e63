import { spawn } from "node:child_process";
import path from "node:path";
import { SEED_RESULT_PREFIX, type SeedRequest, type SeedSummary } from "./board-packets";
import { ROOT, SERVER_CONDITION, SetupError, TSX } from "./server";

const SEED_SCRIPT = path.join(ROOT, "bench", "lib", "seed-board.ts");
/** A bound on one seeding run: far above the minutes 200,000 packets take on 2 cores. */
const SEED_TIMEOUT_MS = 60 * 60_000;

/**
 * Runs seed-board.ts in a child process against `databaseUrl` (no server may be
 * writing to it meanwhile, or the figures include the contention) and returns its
 * summary. Its progress lines pass through to stderr. Aborting kills it.
 */
export function seedBoard(request: SeedRequest, databaseUrl: string, signal: AbortSignal): Promise<SeedSummary> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error("interrupted"));
    const child = spawn(TSX, [SERVER_CONDITION, SEED_SCRIPT, JSON.stringify(request)], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl, NODE_ENV: "production" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let stdout = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      stdout = (stdout + chunk).slice(-100_000);
    });
    const stop = () => child.kill("SIGTERM");
    signal.addEventListener("abort", stop, { once: true });
    const timer = setTimeout(stop, SEED_TIMEOUT_MS);
    child.once("error", (error) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", stop);
      reject(new SetupError(`the seeding script could not start: ${error.message}`));
    });
    child.once("close", (code, killedBy) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", stop);
      const line = stdout.split("\n").find((text) => text.startsWith(SEED_RESULT_PREFIX));
      if (code !== 0 || !line) {
        const why = signal.aborted ? "interrupted" : `exit ${code ?? killedBy}`;
        return reject(new SetupError(`seeding failed (${why}):\n${stdout.trim().slice(-2000)}`));
      }
      resolve(JSON.parse(line.slice(SEED_RESULT_PREFIX.length)) as SeedSummary);
    });
  });
}
