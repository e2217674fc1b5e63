import "server-only";
import path from "node:path";
import { z } from "zod";
import { parseAllowList } from "../notify/targets";
import { parseAllowedHosts } from "../http/hosts";

/**
 * Baton's environment, checked with zod once. Every variable is documented in
 * docs/configuration.md; a bad value stops the process with a message naming it.
 */
const list = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? "")
      .split(",")
      .map((item) => item.trim())
      .filter(Boolean),
  );

/**
 * A list whose entries `parse` checks as a whole: its problem becomes the
 * variable's error, else `key` of its answer is the value.
 */
function checkedList<Key extends string, Value>(
  parse: (entries: string[]) => Record<Key, Value> | { problem: string },
  key: Key,
) {
  return list.transform((entries, context) => {
    const parsed = parse(entries);
    if ("problem" in parsed) {
      context.addIssue({ code: "custom", message: parsed.problem });
      return z.NEVER;
    }
    return parsed[key];
  });
}

/** A sustained rate of `what` a minute, of which 0 turns its limit off. */
function perMinuteLimit(variable: string, what: string, fallback: number) {
  return z.coerce
    .number({ error: `${variable} must be a number of ${what} per minute (0 turns the limit off)` })
    .int()
    .nonnegative()
    .default(fallback);
}

/** A timeout in whole milliseconds, more than 0. */
function milliseconds(variable: string, fallback: number) {
  return z.coerce
    .number({ error: `${variable} must be a number of milliseconds` })
    .int({ error: `${variable} must be a whole number of milliseconds` })
    .positive({ error: `${variable} must be more than 0` })
    .default(fallback);
}

const envSchema = z.object({
  DATABASE_URL: z
    .string()
    .default("file:./data/baton.db")
    .refine((url) => url.startsWith("file:") || isPostgresqlUrl(url), {
      message: "DATABASE_URL must be file:PATH (SQLite) or postgresql://... (PostgreSQL)",
    }),
  BATON_WATCH_DIRS: list,
  /** project=path pairs: where verdict pointers of a project's packets are read. */
  BATON_WORKSPACE_ROOTS: list,
  BATON_STALE_HOURS: z.coerce.number().positive().default(24),
  /** Verdict readings kept in memory at least (lib/views/verdict/cache.ts): more when the board shows more cards. */
  BATON_VERDICT_CACHE_ENTRIES: z.coerce.number().int().positive().default(2000),
  /** The shortest time between two live batches (docs/decisions/076-live-batch-window.md); 0 sends every commit alone. */
  BATON_LIVE_BATCH_MS: z.coerce.number().int().min(0).max(1_000).default(100),
  /** How often the watchdog looks for threads that went stale (and for its other findings). */
  BATON_STALE_CHECK_SECONDS: z.coerce.number().positive().default(60),
  /** How often watched folders are walked for files the watcher missed. */
  BATON_WATCH_RESCAN_SECONDS: z.coerce.number().positive().default(5),
  BATON_SQLITE_BUSY_TIMEOUT_MS: z.coerce.number().int().positive().default(5000),
  /** Baton's address as people reach it: links in webhook messages point here. */
  BATON_PUBLIC_URL: z
    .url({ protocol: /^https?$/, error: "BATON_PUBLIC_URL must be an http(s) URL, e.g. https://baton.example.com" })
    .default("http://localhost:3000")
    .transform((url) => url.replace(/\/+$/, "")),
  /** How long one webhook delivery may take before it counts as failed (and is retried). */
  BATON_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /**
   * Hosts, addresses and CIDR ranges webhooks may post to although they are not
   * public (loopback, private, link-local…): a self-hosted receiver (lib/notify/targets.ts).
   */
  BATON_WEBHOOK_ALLOWED_TARGETS: checkedList(parseAllowList, "allow"),
  /** Requests per minute each API token may send, sustained (lib/http/rate-limit.ts); 0 turns the limit off. */
  BATON_RATE_LIMIT_PER_MINUTE: perMinuteLimit("BATON_RATE_LIMIT_PER_MINUTE", "requests", 600),
  /** Requests a token may send at once after a quiet spell (the bucket's size). */
  BATON_RATE_LIMIT_BURST: z.coerce
    .number({ error: "BATON_RATE_LIMIT_BURST must be a number of requests" })
    .int()
    .min(1, { error: "BATON_RATE_LIMIT_BURST must be at least 1; set BATON_RATE_LIMIT_PER_MINUTE=0 to turn the limit off" })
    .default(120),
  /** Sign-in attempts a minute from one client address, all usernames together (decision 029); 0 turns it off. */
  BATON_SIGN_IN_PER_MINUTE: perMinuteLimit("BATON_SIGN_IN_PER_MINUTE", "sign-in attempts", 30),
  /** Sign-in attempts a minute for the whole process, all addresses together; 0 turns it off. */
  BATON_SIGN_IN_GLOBAL_PER_MINUTE: perMinuteLimit("BATON_SIGN_IN_GLOBAL_PER_MINUTE", "sign-in attempts", 300),
  /**
   * How many proxies in front of Baton append the client's address to X-Forwarded-For;
   * 0 (the default): Baton is reached directly and the header is ignored (lib/http/client-address.ts).
   */
  BATON_TRUSTED_PROXY_HOPS: z.coerce
    .number({ error: "BATON_TRUSTED_PROXY_HOPS must be the number of proxies in front of Baton (0 when none)" })
    .int()
    .nonnegative()
    .max(10)
    .default(0),
  /**
   * Host names (optionally with :port) Baton answers to; any other Host (or
   * X-Forwarded-Host) is refused with 421 (lib/http/hosts.ts). Loopback names always pass.
   */
  BATON_ALLOWED_HOSTS: checkedList(parseAllowedHosts, "hosts"),
  /** How long reading one request body may take in all (lib/http/body.ts); past it 408. */
  BATON_BODY_TIMEOUT_MS: milliseconds("BATON_BODY_TIMEOUT_MS", 15_000),
  /** How long a request body may send nothing before reading it stops with 408. */
  BATON_BODY_IDLE_TIMEOUT_MS: milliseconds("BATON_BODY_IDLE_TIMEOUT_MS", 5_000),
  /** Code host deliveries whose own time is older than this are refused as replays (lib/integrations/receive.ts). */
  BATON_INTEGRATION_REPLAY_MINUTES: z.coerce.number().positive().default(60),
  /** A merged pull request archives its threads at once, rather than offering a one-click archive. */
  BATON_ARCHIVE_ON_MERGE: z
    .enum(["0", "1", "true", "false"], { error: "BATON_ARCHIVE_ON_MERGE must be 1 or 0" })
    .default("0")
    .transform((value) => value === "1" || value === "true"),
});

export type BatonConfig = z.infer<typeof envSchema>;

let cached: BatonConfig | undefined;

export function config(): BatonConfig {
  if (cached) return cached;
  const parsed = envSchema.safeParse(process.env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ");
    throw new Error(`Baton's environment is not valid: ${problems}`);
  }
  cached = parsed.data;
  return cached;
}

/** Tests and the CLI change the environment between runs. */
export function resetConfig(): void {
  cached = undefined;
}

export function isPostgresqlUrl(databaseUrl: string): boolean {
  return /^postgres(ql)?:\/\//.test(databaseUrl);
}

/** The URL as it may be printed: a password in it is masked. */
export function printableDatabaseUrl(databaseUrl: string): string {
  return databaseUrl.replace(/\/\/([^:@/]*):[^@/]*@/, "//$1:***@");
}

export function sqliteFilePath(databaseUrl: string): string {
  return path.resolve(databaseUrl.replace(/^file:/, ""));
}
