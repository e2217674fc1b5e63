import "server-only";
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { database, inSqlStatements, inTransaction, sqlExecutor } from "../db/client";
import { BatonError } from "../core/errors";
import { newId } from "../db/ids";
import { Prisma } from "../generated/prisma/client";
import { appendLedgerEvents } from "../events/ledger";
import { announceLedger } from "../events/bus";
import { projectNameSchema } from "../contract/project-binding";
import { displayNameSchema } from "../contract/display-name";
import { tokenSummarySchema, type TokenSummary } from "./dto";
import { TOKEN_SCOPES, tokenScopeSchema, type TokenScope } from "./token-scopes";

export { TOKEN_SCOPES, tokenScopeSchema, tokenSummarySchema, type TokenScope, type TokenSummary };

const TOKEN_PATTERN = /^btn_([a-z0-9]{8})_([A-Za-z0-9]{32})$/;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const LOWER36 = "0123456789abcdefghijklmnopqrstuvwxyz";

function randomString(length: number, alphabet: string): string {
  // Rejection sampling keeps every character equally likely.
  const limit = 256 - (256 % alphabet.length);
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < limit && out.length < length) out += alphabet[byte % alphabet.length];
    }
  }
  return out;
}

const hashSecret = (token: string) => createHash("sha256").update(token).digest("hex");

interface TokenRow {
  id: string;
  name: string;
  prefix: string;
  last4: string;
  scopes: string;
  project: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

function summarise(row: TokenRow): TokenSummary {
  return tokenSummarySchema.parse({
    id: row.id,
    name: row.name,
    display: `${row.prefix}...${row.last4}`,
    scopes: row.scopes.split(",").filter(Boolean),
    project: row.project,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
  });
}

/** What the ledger records of a token: never the secret or its hash. */
function tokenEventData(row: TokenRow): Record<string, unknown> {
  return { token_id: row.id, name: row.name, display: `${row.prefix}...${row.last4}`, scopes: row.scopes.split(","), project: row.project };
}

/** The longest token name. */
export const TOKEN_NAME_MAX = 100;

/**
 * Creates a token; the secret is returned once and only its hash is stored. A `project`
 * binds it (docs/decisions/056-project-bound-tokens.md); it is read by the rules of a
 * packet's project field.
 */
export async function createApiToken(
  name: string,
  scopes: TokenScope[],
  actor = "cli",
  project?: string,
): Promise<{ token: string; summary: TokenSummary }> {
  // The CLI comes here without the route's schema: the same rules, one definition.
  const checkedName = displayNameSchema("name", TOKEN_NAME_MAX).safeParse(name);
  if (!checkedName.success) {
    throw new BatonError("invalid_request", `A token needs a name of 1 to ${TOKEN_NAME_MAX} characters: ${checkedName.error.issues[0]!.message}.`, { field: "name" });
  }
  const cleanName = checkedName.data;
  if (!scopes.length) {
    throw new BatonError("invalid_request", `Give at least one scope: ${TOKEN_SCOPES.join(", ")}.`, { field: "scopes" });
  }
  const boundProject = project === undefined ? null : projectNameSchema.safeParse(project);
  if (boundProject && !boundProject.success) {
    throw new BatonError("invalid_request", `${boundProject.error.issues[0]!.message}.`, { field: "project" });
  }
  const publicId = randomString(8, LOWER36);
  const token = `btn_${publicId}_${randomString(32, BASE62)}`;
  const now = new Date();
  const row = await inTransaction(async (tx) => {
    const created = await tx.apiToken.create({
      data: {
        id: newId("tok"),
        name: cleanName,
        prefix: `btn_${publicId}`,
        secretHash: hashSecret(token),
        last4: token.slice(-4),
        scopes: [...new Set(scopes)].sort().join(","),
        project: boundProject?.data ?? null,
        createdAt: now,
      },
    });
    await appendLedgerEvents(tx, [{ kind: "token_created", actor, data: tokenEventData(created) }], now);
    return created;
  });
  announceLedger();
  return { token, summary: summarise(row) };
}

export async function listApiTokens(): Promise<TokenSummary[]> {
  const db = await database();
  const rows = await db.apiToken.findMany({ orderBy: { createdAt: "desc" } });
  return rows.map(summarise);
}

/** Revokes by id or by the displayed prefix; takes effect on the next request. */
export async function revokeApiToken(idOrPrefix: string, actor = "cli"): Promise<TokenSummary> {
  const prefix = idOrPrefix.split("...")[0] ?? idOrPrefix;
  // In a transaction: a write outside one would join (and roll back with) another request's open transaction.
  const updated = await inTransaction(async (tx) => {
    const row = await tx.apiToken.findFirst({ where: { OR: [{ id: idOrPrefix }, { prefix }] } });
    if (!row) throw new BatonError("not_found", `No token matches "${idOrPrefix}"; run \`baton token list\` to see them.`);
    if (row.revokedAt) return row;
    const now = new Date();
    const revoked = await tx.apiToken.update({ where: { id: row.id }, data: { revokedAt: now } });
    await appendLedgerEvents(tx, [{ kind: "token_revoked", actor, data: tokenEventData(revoked) }], now);
    return revoked;
  });
  announceLedger();
  return summarise(updated);
}

export interface AuthenticatedToken {
  id: string;
  name: string;
  scopes: TokenScope[];
  /** The project it is bound to, or null: it writes any thread (decision 056). */
  project: string | null;
}

const LAST_USED_WRITE_INTERVAL_MS = 60_000;
const lastUsedWrites = new Map<string, number>();

/**
 * Checks `Authorization: Bearer <token>` and the scope. 401 without a valid,
 * unrevoked token; 403 when the token lacks the scope. Never cached, so a
 * revocation holds from the next request.
 */
export async function authenticateBearer(header: string | null, scope: TokenScope): Promise<AuthenticatedToken> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  const token = match?.[1] ?? "";
  const parts = TOKEN_PATTERN.exec(token);
  // Made only when refused: an error captures its stack, and every API request passes here.
  const unauthenticated = () =>
    new BatonError("unauthenticated", "Send a valid API token as `Authorization: Bearer <token>` (create one with `baton token create`).");
  if (!parts) throw unauthenticated();
  // Every API request passes here: a direct statement, not an ORM query.
  const sql = await sqlExecutor();
  const rows = await sql.query<{ id: string; name: string; secretHash: string; scopes: string; project: string | null; revokedAt: unknown }>(
    Prisma.sql`SELECT "id", "name", "secretHash", "scopes", "project", "revokedAt" FROM "ApiToken" WHERE "prefix" = ${`btn_${parts[1]}`}`,
  );
  const row = rows[0];
  const expected = Buffer.from(row?.secretHash ?? "0".repeat(64), "hex");
  const actual = Buffer.from(hashSecret(token), "hex");
  if (!row || !timingSafeEqual(expected, actual) || row.revokedAt !== null) throw unauthenticated();
  const scopes = row.scopes.split(",").filter((s): s is TokenScope => tokenScopeSchema.safeParse(s).success);
  if (!scopes.includes(scope)) {
    throw new BatonError("forbidden", `This token lacks the scope "${scope}"; create one that has it.`, {
      required_scope: scope,
      token_scopes: scopes,
    });
  }
  const now = Date.now();
  if (now - (lastUsedWrites.get(row.id) ?? 0) > LAST_USED_WRITE_INTERVAL_MS) {
    lastUsedWrites.set(row.id, now);
    try {
      // One statement outside the writers' turn: bookkeeping that no ledger row depends on (issue 15).
      await inSqlStatements((sql) => sql.execute(Prisma.sql`UPDATE "ApiToken" SET "lastUsedAt" = ${new Date(now)} WHERE "id" = ${row.id}`));
    } catch (error) {
      // Bookkeeping: a busy database must not refuse the request it describes (a read
      // would answer 503 for it). The next request writes it.
      if (!(error instanceof BatonError && error.code === "unavailable")) throw error;
      lastUsedWrites.delete(row.id);
    }
  }
  return { id: row.id, name: row.name, scopes, project: row.project };
}
