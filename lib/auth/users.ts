import "server-only";
import { z } from "zod";
import { database, inTransaction, type Tx } from "../db/client";
import { BatonError } from "../core/errors";
import { newId } from "../db/ids";
import { appendLedgerEvents } from "../events/ledger";
import { announceLedger } from "../events/bus";
import { parseInput } from "../core/parse-input";
import { userDtoSchema, type UserDto } from "./dto";
import { hashPassword, passwordSchema } from "./passwords";
import { roleSchema, type Person, type Role } from "./roles";

export const usernameSchema = z
  .string({ error: "username must be a string" })
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9][a-z0-9._-]{1,39}$/, "username must be 2 to 40 letters, digits, dots, dashes or underscores, starting with a letter or digit");

export const newAccountSchema = z.strictObject({ username: usernameSchema, password: passwordSchema, role: roleSchema });
export type NewAccount = z.infer<typeof newAccountSchema>;

export { userDtoSchema, type UserDto };

interface UserRow {
  id: string;
  username: string;
  role: string;
  createdAt: Date;
  disabledAt: Date | null;
}

const toUserDto = (row: UserRow): UserDto =>
  userDtoSchema.parse({ id: row.id, username: row.username, role: row.role, created_at: row.createdAt.toISOString(), disabled: row.disabledAt !== null });

export const toPerson = (row: UserRow): Person => ({ id: row.id, username: row.username, role: roleSchema.parse(row.role) });

export async function hasAnyUser(): Promise<boolean> {
  return (await (await database()).user.count()) > 0;
}

async function insertUser(tx: Tx, account: NewAccount, passwordHash: string, actor: string, now: Date) {
  if (await tx.user.findUnique({ where: { username: account.username } })) {
    throw new BatonError("conflict", `The username "${account.username}" is taken; choose another.`, { field: "username" });
  }
  const row = await tx.user.create({
    data: { id: newId("usr"), username: account.username, passwordHash, role: account.role, createdAt: now },
  });
  await appendLedgerEvents(tx, [{ kind: "user_created", actor, data: { user_id: row.id, username: row.username, role: row.role } }], now);
  return row;
}

/**
 * The first visit to a fresh install creates the admin. Refused once anyone
 * exists, checked inside the write so two first visitors cannot both win.
 */
export async function createFirstAdmin(input: { username: string; password: string }): Promise<Person> {
  const account = parseInput(newAccountSchema, { ...input, role: "admin" }, "admin account");
  const passwordHash = await hashPassword(account.password);
  const row = await inTransaction(async (tx) => {
    if ((await tx.user.count()) > 0) {
      throw new BatonError("conflict", "Baton already has an admin; sign in instead.");
    }
    return insertUser(tx, account, passwordHash, account.username, new Date());
  });
  announceLedger();
  return toPerson(row);
}

/**
 * Creates an account; `actor` is who the ledger says did it: a person's
 * username, or "cli" for `baton user create` (which may also make the first
 * admin of a fresh install). The caller parsed `account` with newAccountSchema
 * (the route's body, the CLI's arguments).
 */
export async function createUserAs(actor: string, account: NewAccount): Promise<UserDto> {
  const passwordHash = await hashPassword(account.password);
  const row = await inTransaction((tx) => insertUser(tx, account, passwordHash, actor, new Date()));
  announceLedger();
  return toUserDto(row);
}

export function createUser(actor: Person, account: NewAccount): Promise<UserDto> {
  return createUserAs(actor.username, account);
}

export const passwordChangeSchema = z.strictObject({ username: usernameSchema, password: passwordSchema });

/**
 * Gives a person a new password (`baton user password`, for someone locked
 * out) and ends all their sessions: whoever held one must sign in with the new
 * password. A disabled account stays disabled. The password is never recorded.
 */
export async function setPassword(actor: string, username: string, password: string): Promise<{ user: UserDto; sessionsEnded: number }> {
  const change = parseInput(passwordChangeSchema, { username, password }, "password change");
  const passwordHash = await hashPassword(change.password);
  const now = new Date();
  const result = await inTransaction(async (tx) => {
    const user = await tx.user.findUnique({ where: { username: change.username } });
    if (!user) throw new BatonError("not_found", `No user is named "${change.username}".`, { field: "username" });
    const updated = await tx.user.update({ where: { id: user.id }, data: { passwordHash } });
    const ended = await tx.session.updateMany({ where: { userId: user.id, endedAt: null }, data: { endedAt: now } });
    await appendLedgerEvents(
      tx,
      [{ kind: "user_password_set", actor, data: { user_id: user.id, username: user.username, sessions_ended: ended.count } }],
      now,
    );
    return { row: updated, sessionsEnded: ended.count };
  });
  announceLedger();
  return { user: toUserDto(result.row), sessionsEnded: result.sessionsEnded };
}

export async function listUsers(): Promise<UserDto[]> {
  const rows = await (await database()).user.findMany({ orderBy: { createdAt: "asc" } });
  return rows.map(toUserDto);
}

export const userChangeSchema = z
  .strictObject({ role: roleSchema.optional(), disabled: z.boolean({ error: "disabled must be true or false" }).optional() })
  .refine((change) => change.role !== undefined || change.disabled !== undefined, "send role and/or disabled");
export type UserChange = z.infer<typeof userChangeSchema>;

/**
 * Changes a person's role or disables the account (its sessions end at once).
 * The last active admin can be neither demoted nor disabled: someone must be
 * able to administer Baton.
 */
export async function changeUser(actor: Person, userId: string, change: UserChange): Promise<UserDto> {
  const now = new Date();
  const row = await inTransaction(async (tx) => {
    const user = await tx.user.findUnique({ where: { id: userId } });
    if (!user) throw new BatonError("not_found", `No user has the id "${userId}".`);
    const losesAdmin = user.role === "admin" && user.disabledAt === null && ((change.role && change.role !== "admin") || change.disabled);
    if (losesAdmin && (await tx.user.count({ where: { role: "admin", disabledAt: null } })) <= 1) {
      throw new BatonError("conflict", "This is the last active admin; make someone else admin first.", { field: change.role ? "role" : "disabled" });
    }
    const updated = await tx.user.update({
      where: { id: userId },
      data: {
        ...(change.role ? { role: change.role } : {}),
        ...(change.disabled === undefined ? {} : { disabledAt: change.disabled ? (user.disabledAt ?? now) : null }),
      },
    });
    if (change.disabled) await tx.session.updateMany({ where: { userId, endedAt: null }, data: { endedAt: now } });
    const events = [];
    if (change.role && change.role !== user.role) {
      events.push({ kind: "user_role_changed" as const, actor: actor.username, data: { user_id: userId, username: user.username, from: user.role, to: change.role } });
    }
    if (change.disabled !== undefined && change.disabled !== (user.disabledAt !== null)) {
      events.push({ kind: change.disabled ? ("user_disabled" as const) : ("user_enabled" as const), actor: actor.username, data: { user_id: userId, username: user.username } });
    }
    await appendLedgerEvents(tx, events, now);
    return updated;
  });
  announceLedger();
  return toUserDto(row);
}

export type { Role };
