import "server-only";
import { sqlExecutor } from "../db/client";
import { BatonError } from "../core/errors";
import { Prisma } from "../generated/prisma/client";
import { cookieOf } from "./person";
import type { Reader } from "./read-access";
import { roleSchema } from "./roles";
import { SESSION_COOKIE, sessionIdOf, sessionIsLive } from "./sessions";
import { singleton } from "../core/singleton";
import { inChunks } from "../db/sql";

/**
 * Readers that stay (a live stream, a waiting read): capped per reader, and every identity
 * re-checked every RECHECK_INTERVAL_MS in one statement per kind (docs/decisions/026-reader-rechecks.md).
 */

/** How often held identities are checked again; a revoked reader is cut off within this plus one query. */
export const RECHECK_INTERVAL_MS = 2_000;
/**
 * Live streams one reader may hold per process. A browser opens one per tab and
 * a script one; 20 is room for both, and 50 readers are needed to reach the
 * per-process cap (MAX_STREAMS_PER_PROCESS, 1,000) rather than one.
 */
export const MAX_STREAMS_PER_READER = 20;
/**
 * Waiting reads one reader may hold per process: one per thread an agent waits
 * on (`baton wait`), and one token often serves several agents. Far below the
 * per-process cap (MAX_WAITERS_PER_PROCESS, 10,000).
 */
export const MAX_WAITS_PER_READER = 50;
/** Retry-After on a per-reader cap: a slot frees only when one of the reader's own streams or waits ends. */
export const READER_CAP_RETRY_AFTER_SECONDS = 5;

/** What a reader was authorised as: the rows that must still allow it. */
export type ReaderIdentity = { kind: "token"; tokenId: string } | { kind: "session"; sessionId: string; personId: string };

export type HoldKind = "stream" | "wait";

/** One stream or wait held for a reader; `release` when it ends (any number of times). */
export interface ReaderHold {
  release(): void;
}

/**
 * The identity `authoriseRead` admitted `request` as: the token's id, or the
 * session (the hash of the same cookie authoriseRead read) and its person.
 */
export function readerIdentity(request: Request, reader: Reader): ReaderIdentity {
  if (reader.kind === "token") return { kind: "token", tokenId: reader.token.id };
  return { kind: "session", sessionId: sessionIdOf(cookieOf(request, SESSION_COOKIE) ?? ""), personId: reader.person.id };
}

const identityKey = (identity: ReaderIdentity) => (identity.kind === "token" ? `token:${identity.tokenId}` : `session:${identity.sessionId}`);

interface Holder {
  kind: HoldKind;
  end: (error: BatonError) => void;
}

interface Group {
  identity: ReaderIdentity;
  holders: Set<Holder>;
  streams: number;
  waits: number;
}

interface Registry {
  groups: Map<string, Group>;
  timer: NodeJS.Timeout | null;
  intervalMs: number;
  checking: boolean;
  /** Rounds of checks and lookup statements since the process started (for tests and the decision record's claim). */
  rounds: number;
  lookups: number;
}

// On globalThis: each route bundle may hold its own copy of this module, and the
// caps count across all of them.
const registry = singleton<Registry>("ReaderChecks", () => ({
  groups: new Map(),
  timer: null,
  intervalMs: RECHECK_INTERVAL_MS,
  checking: false,
  rounds: 0,
  lookups: 0,
}));

function capError(identity: ReaderIdentity, kind: HoldKind, limit: number): BatonError {
  const who = identity.kind === "token" ? "This API token" : "This session";
  const what = kind === "stream" ? "live streams (GET /api/v1/stream)" : "waiting reads (?wait=)";
  return new BatonError(
    "rate_limited",
    `${who} already holds ${limit} ${what} open on this server, the most one reader may; close one, or retry in ${READER_CAP_RETRY_AFTER_SECONDS} s.`,
    { limit, kind, retry_after_seconds: READER_CAP_RETRY_AFTER_SECONDS },
    READER_CAP_RETRY_AFTER_SECONDS,
  );
}

function startTimer(): void {
  if (registry.timer) return;
  registry.timer = setInterval(() => void recheckReaders(), registry.intervalMs);
  registry.timer.unref();
}

function stopTimer(): void {
  if (registry.timer) clearInterval(registry.timer);
  registry.timer = null;
}

/**
 * Holds a stream or a wait for `identity`: 429 `rate_limited` when the reader
 * already holds its cap of that kind. From then on `end` is called (once) if a
 * check finds the reader no longer allowed; it must end the stream or wait and
 * release the hold.
 */
export function holdReader(identity: ReaderIdentity, kind: HoldKind, end: (error: BatonError) => void): ReaderHold {
  const key = identityKey(identity);
  const existing = registry.groups.get(key);
  const limit = kind === "stream" ? MAX_STREAMS_PER_READER : MAX_WAITS_PER_READER;
  const held = kind === "stream" ? (existing?.streams ?? 0) : (existing?.waits ?? 0);
  if (held >= limit) throw capError(identity, kind, limit);

  const group = existing ?? { identity, holders: new Set<Holder>(), streams: 0, waits: 0 };
  if (!existing) registry.groups.set(key, group);
  let ended = false;
  const entry: Holder = {
    kind,
    end: (error) => {
      if (ended) return;
      ended = true;
      end(error);
    },
  };
  group.holders.add(entry);
  if (kind === "stream") group.streams++;
  else group.waits++;
  startTimer();

  return {
    release() {
      ended = true;
      if (!group.holders.delete(entry)) return;
      if (kind === "stream") group.streams--;
      else group.waits--;
      if (!group.holders.size && registry.groups.get(key) === group) registry.groups.delete(key);
      if (!registry.groups.size) stopTimer();
    },
  };
}

interface TokenRow {
  id: string;
  revokedAt: unknown;
  scopes: string;
}

interface SessionRow {
  id: string;
  userId: string;
  endedAt: unknown;
  expiresAt: string;
  lastSeenAt: string;
  disabledAt: unknown;
  role: string;
}

/** Rows for `ids`, one statement per IN_LIST_MAX readers (lib/db/sql.ts). */
async function lookUp<Row>(ids: string[], statement: (ids: Prisma.Sql) => Prisma.Sql): Promise<Map<string, Row>> {
  const sql = await sqlExecutor();
  const rows = await inChunks(ids, (chunk) => {
    registry.lookups++;
    return sql.query<Row & { id: string }>(statement(Prisma.join(chunk)));
  });
  return new Map(rows.map((row) => [row.id, row]));
}

/** Why the token no longer reads, or null while it still does. */
function tokenVerdict(row: TokenRow | undefined): BatonError | null {
  if (!row || row.revokedAt !== null) {
    return new BatonError("unauthenticated", "The API token this was opened with has been revoked; send a valid token as `Authorization: Bearer <token>`.");
  }
  const scopes = row.scopes.split(",").filter(Boolean);
  if (!scopes.includes("packets:read")) {
    return new BatonError("forbidden", 'This token no longer has the scope "packets:read"; create one that has it.', {
      required_scope: "packets:read",
      token_scopes: scopes,
    });
  }
  return null;
}

/** Why the session no longer reads (the rules of personOfSession), or null while it still does. */
function sessionVerdict(identity: Extract<ReaderIdentity, { kind: "session" }>, row: SessionRow | undefined, now: number): BatonError | null {
  if (row && row.disabledAt !== null && row.userId === identity.personId) {
    return new BatonError("unauthenticated", "This account has been disabled; ask an admin.");
  }
  if (
    !row ||
    row.userId !== identity.personId ||
    !sessionIsLive({ endedAt: row.endedAt, expiresAt: new Date(row.expiresAt), lastSeenAt: new Date(row.lastSeenAt) }, now)
  ) {
    return new BatonError("unauthenticated", "Your session has ended (signed out or expired); sign in to Baton again.");
  }
  if (!roleSchema.safeParse(row.role).success) {
    return new BatonError("forbidden", "Your account no longer has a role that may read the board; ask an admin.");
  }
  return null;
}

/**
 * One round of checks: every held identity against its rows, and every hold of
 * a reader no longer allowed ended. Runs on the timer; exported for tests. A
 * database error ends nothing (the next round tries again) and is logged.
 */
export async function recheckReaders(): Promise<void> {
  if (registry.checking || !registry.groups.size) return;
  registry.checking = true;
  registry.rounds++;
  try {
    const groups = [...registry.groups.values()];
    const tokenIds = groups.flatMap((group) => (group.identity.kind === "token" ? [group.identity.tokenId] : []));
    const sessionIds = groups.flatMap((group) => (group.identity.kind === "session" ? [group.identity.sessionId] : []));
    const tokens = tokenIds.length
      ? await lookUp<TokenRow>(tokenIds, (ids) => Prisma.sql`SELECT "id", "revokedAt", "scopes" FROM "ApiToken" WHERE "id" IN (${ids})`)
      : new Map<string, TokenRow>();
    const sessions = sessionIds.length
      ? await lookUp<SessionRow>(
          sessionIds,
          (ids) => Prisma.sql`SELECT s."id", s."userId", s."endedAt", s."expiresAt", s."lastSeenAt", u."disabledAt", u."role"
            FROM "Session" s JOIN "User" u ON u."id" = s."userId" WHERE s."id" IN (${ids})`,
        )
      : new Map<string, SessionRow>();
    const now = Date.now();
    for (const group of groups) {
      const { identity } = group;
      const verdict = identity.kind === "token" ? tokenVerdict(tokens.get(identity.tokenId)) : sessionVerdict(identity, sessions.get(identity.sessionId), now);
      if (!verdict) continue;
      for (const entry of [...group.holders]) {
        try {
          entry.end(verdict);
        } catch (error) {
          console.error("baton: ending a revoked reader's stream or wait failed", error);
        }
      }
    }
  } catch (error) {
    console.error("baton: checking open streams' and waits' readers failed; trying again shortly", error instanceof Error ? error.message : error);
  } finally {
    registry.checking = false;
  }
}

export interface ReaderChecksStatus {
  /** Distinct readers (tokens, sessions) holding a stream or a wait. */
  readers: number;
  streams: number;
  waits: number;
  /** True while the check timer runs (only while something is held). */
  checking: boolean;
  /** Rounds of checks, and lookup statements they ran, since the process started. */
  rounds: number;
  lookups: number;
}

export function readerChecksStatus(): ReaderChecksStatus {
  let streams = 0;
  let waits = 0;
  for (const group of registry.groups.values()) {
    streams += group.streams;
    waits += group.waits;
  }
  return { readers: registry.groups.size, streams, waits, checking: registry.timer !== null, rounds: registry.rounds, lookups: registry.lookups };
}

/**
 * For tests: checks every `ms` instead of RECHECK_INTERVAL_MS from now on;
 * returns the function that puts the production interval back.
 */
export function setRecheckIntervalForTests(ms: number): () => void {
  const restart = (value: number) => {
    registry.intervalMs = value;
    if (registry.timer) {
      stopTimer();
      startTimer();
    }
  };
  restart(ms);
  return () => restart(RECHECK_INTERVAL_MS);
}
