import "server-only";
import { createHash, randomBytes } from "node:crypto";
import { database, inTransaction } from "../db/client";
import { BatonError } from "../core/errors";
import { appendLedgerEvents } from "../events/ledger";
import { announceLedger } from "../events/bus";
import { verifyAgainstDecoy, verifyPassword } from "./passwords";
import type { Person } from "./roles";
import { signInThrottle } from "./sign-in-throttle";
import { toPerson, usernameSchema } from "./users";

export { SESSION_COOKIE } from "./session-cookie";
import { SESSION_COOKIE } from "./session-cookie";
/** A session lasts at most this long, and ends sooner after this much idleness. */
export const SESSION_MAX_MS = 30 * 24 * 3_600_000;
export const SESSION_IDLE_MS = 7 * 24 * 3_600_000;
// Recording "last seen" on every request would make every page view a write.
const TOUCH_EVERY_MS = 5 * 60_000;

/** The stored id of a session: the SHA-256 of its cookie's secret. */
export const sessionIdOf = (secret: string) => createHash("sha256").update(secret).digest("hex");

export interface StartedSession {
  /** The cookie's value; only its hash is stored. */
  secret: string;
  expiresAt: Date;
  person: Person;
}

/** Starts a session for a person who just proved who they are; always a new session id. */
export async function startSession(person: Person, how: "password" | "setup"): Promise<StartedSession> {
  const secret = randomBytes(32).toString("base64url");
  const now = new Date();
  const expiresAt = new Date(now.getTime() + SESSION_MAX_MS);
  await inTransaction(async (tx) => {
    await tx.session.create({ data: { id: sessionIdOf(secret), userId: person.id, createdAt: now, lastSeenAt: now, expiresAt } });
    await appendLedgerEvents(tx, [{ kind: "signed_in", actor: person.username, data: { user_id: person.id, how } }], now);
  });
  announceLedger();
  return { secret, expiresAt, person };
}

/**
 * Checks a username and password coming from `clientAddress` (lib/http/client-address.ts).
 * Throttled per address and username, per address and for the whole process before
 * any password is checked (lib/auth/sign-in-throttle.ts, decision 029): 429 with Retry-After.
 */
export async function signIn(input: { username: unknown; password: unknown }, clientAddress: string): Promise<StartedSession> {
  const parsed = usernameSchema.safeParse(input.username);
  const password = typeof input.password === "string" ? input.password : "";
  const username = parsed.success ? parsed.data : "";
  const throttle = signInThrottle();
  throttle.admit(username, clientAddress);
  const user = username ? await (await database()).user.findUnique({ where: { username } }) : null;
  const ok = user && !user.disabledAt ? await verifyPassword(user.passwordHash, password) : await verifyAgainstDecoy(password);
  if (!ok || !user) throw new BatonError("unauthenticated", "Wrong username or password.");
  throttle.succeeded(username, clientAddress);
  return startSession(toPerson(user), "password");
}

/** Whether a stored session still signs its person in: not ended, not expired, not idle too long. */
export function sessionIsLive(session: { endedAt: unknown; expiresAt: Date; lastSeenAt: Date }, now: number): boolean {
  return !session.endedAt && session.expiresAt.getTime() > now && now - session.lastSeenAt.getTime() <= SESSION_IDLE_MS;
}

/** The person behind a session cookie, or null when it is unknown, ended, expired or idle too long. */
export async function personOfSession(secret: string | undefined | null): Promise<Person | null> {
  if (!secret || secret.length > 100) return null;
  const db = await database();
  const session = await db.session.findUnique({ where: { id: sessionIdOf(secret) }, include: { user: true } });
  const now = Date.now();
  if (!session || session.user.disabledAt || !sessionIsLive(session, now)) return null;
  if (now - session.lastSeenAt.getTime() > TOUCH_EVERY_MS) {
    try {
      await inTransaction((tx) => tx.session.update({ where: { id: session.id }, data: { lastSeenAt: new Date(now) } }));
    } catch (error) {
      // The idle clock is bookkeeping: a busy database must not sign the person out of
      // this request (it would answer 503); the next request touches it.
      if (!(error instanceof BatonError && error.code === "unavailable")) throw error;
    }
  }
  return toPerson(session.user);
}

/** Ends the session on the server: the cookie is worthless afterwards, even if someone kept a copy. */
export async function endSession(secret: string | undefined | null): Promise<void> {
  if (!secret) return;
  const now = new Date();
  const ended = await inTransaction(async (tx) => {
    const session = await tx.session.findUnique({ where: { id: sessionIdOf(secret) }, include: { user: true } });
    if (!session || session.endedAt) return false;
    await tx.session.update({ where: { id: session.id }, data: { endedAt: now } });
    await appendLedgerEvents(tx, [{ kind: "signed_out", actor: session.user.username, data: { user_id: session.userId } }], now);
    return true;
  });
  if (ended) announceLedger();
}

/** The Set-Cookie value for a session; `Secure` when the page is served over https. */
export function sessionCookie(secret: string, expiresAt: Date, secure: boolean): string {
  const parts = [`${SESSION_COOKIE}=${secret}`, "Path=/", "HttpOnly", "SameSite=Lax", `Expires=${expiresAt.toUTCString()}`];
  if (secure) parts.push("Secure");
  return parts.join("; ");
}

export function clearedSessionCookie(secure: boolean): string {
  return [`${SESSION_COOKIE}=`, "Path=/", "HttpOnly", "SameSite=Lax", "Max-Age=0", ...(secure ? ["Secure"] : [])].join("; ");
}
