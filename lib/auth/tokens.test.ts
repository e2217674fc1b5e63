import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { database } from "../db/client";
import { BatonError } from "../core/errors";
import { ingestPacket, type IngestSource } from "../ingest/ingest";
import { expectBatonError } from "@/testing/expect-baton-error";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { authenticateBearer, createApiToken, listApiTokens, revokeApiToken } from "./tokens";

freshDatabaseForThisFile();

const TOKEN_FORMAT = /^btn_([a-z0-9]{8})_([A-Za-z0-9]{32})$/;

describe("API tokens", () => {
  it("creates a token shown once and stores only its hash", async () => {
    const { token, summary } = await createApiToken("  ci runner  ", ["packets:write", "packets:read", "packets:write"]);
    const [, publicId, secret] = TOKEN_FORMAT.exec(token) ?? [];
    expect(publicId).toBeDefined();
    expect(summary).toMatchObject({
      name: "ci runner",
      display: `btn_${publicId}...${token.slice(-4)}`,
      scopes: ["packets:read", "packets:write"],
      last_used_at: null,
      revoked_at: null,
    });

    const db = await database();
    const row = await db.apiToken.findUniqueOrThrow({ where: { id: summary.id } });
    expect(row.prefix).toBe(`btn_${publicId}`);
    expect(row.secretHash).toBe(createHash("sha256").update(token).digest("hex"));
    expect(row.last4).toBe(token.slice(-4));
    const stored = JSON.stringify(Object.values(row));
    expect(stored).not.toContain(secret!);
    expect(stored).not.toContain(secret!.slice(0, 16));
    expect(stored).not.toContain(token);
  });

  it("creates a different secret every time", async () => {
    const a = await createApiToken("a", ["packets:read"]);
    const b = await createApiToken("b", ["packets:read"]);
    expect(a.token).not.toBe(b.token);
    expect(a.token.slice(0, 12)).not.toBe(b.token.slice(0, 12));
  });

  it("refuses a token without a name or a scope", async () => {
    await expectBatonError(createApiToken("   ", ["packets:read"]), "invalid_request");
    await expectBatonError(createApiToken("x".repeat(101), ["packets:read"]), "invalid_request");
    await expectBatonError(createApiToken("no scopes", []), "invalid_request");
  });

  it("lists tokens as prefix...last4 without the secret", async () => {
    const { token, summary } = await createApiToken("listed", ["events:write"]);
    const listed = (await listApiTokens()).find((item) => item.id === summary.id);
    expect(listed).toEqual(summary);
    expect(listed!.display).toBe(`${token.slice(0, 12)}...${token.slice(-4)}`);
    expect(JSON.stringify(await listApiTokens())).not.toContain(token.slice(13, 45));
  });

  it("authenticates the bearer token for its scopes", async () => {
    const { token, summary } = await createApiToken("pusher", ["packets:write", "packets:read"]);
    const auth = await authenticateBearer(`Bearer ${token}`, "packets:write");
    expect(auth).toEqual({ id: summary.id, name: "pusher", scopes: ["packets:read", "packets:write"], project: null });
    expect(await authenticateBearer(`bearer   ${token} `, "packets:read")).toMatchObject({ id: summary.id });
    const db = await database();
    expect((await db.apiToken.findUniqueOrThrow({ where: { id: summary.id } })).lastUsedAt).toBeInstanceOf(Date);
  });

  it("binds a token to a project: listed, in the ledger and in what authenticates (decision 056)", async () => {
    const { token, summary } = await createApiToken("bound", ["packets:write"], "cli:mei", "  billing  ");
    expect(summary.project).toBe("billing");
    expect((await listApiTokens()).find((item) => item.id === summary.id)?.project).toBe("billing");
    expect(await authenticateBearer(`Bearer ${token}`, "packets:write")).toMatchObject({ id: summary.id, project: "billing" });
    const db = await database();
    const created = await db.ledgerEvent.findMany({ where: { kind: "token_created" } });
    expect(created.map((event) => JSON.parse(event.data)).find((data) => data.token_id === summary.id)).toMatchObject({ project: "billing" });
    const blank = await expectBatonError(createApiToken("blank project", ["packets:write"], "cli", " "), "invalid_request");
    expect(blank.message).toContain("project must not be blank");
    expect(blank.details).toEqual({ field: "project" });
  });

  it("refuses wrong and malformed tokens as unauthenticated", async () => {
    const { token } = await createApiToken("target", ["packets:write"]);
    const flipped = token.slice(0, -1) + (token.endsWith("A") ? "B" : "A");
    const otherPrefix = `btn_zzzzzzzz_${token.slice(-32)}`;
    for (const header of [
      null,
      "",
      token,
      `Basic ${token}`,
      `Bearer ${flipped}`,
      `Bearer ${otherPrefix}`,
      `Bearer ${token}x`,
      `Bearer ${token.slice(0, -1)}`,
      `Bearer ${token.toUpperCase()}`,
      "Bearer btn_short_abc",
      `Bearer ${token} ${token}`,
    ]) {
      const error = await expectBatonError(authenticateBearer(header, "packets:write"), "unauthenticated");
      expect(error.status, String(header)).toBe(401);
    }
  });

  it("refuses a valid token without the scope as forbidden", async () => {
    const { token } = await createApiToken("reader", ["packets:read"]);
    const error = await expectBatonError(authenticateBearer(`Bearer ${token}`, "packets:write"), "forbidden");
    expect(error.status).toBe(403);
    expect(error.details).toEqual({ required_scope: "packets:write", token_scopes: ["packets:read"] });
  });

  it("refuses a revoked token from the next call", async () => {
    const { token, summary } = await createApiToken("short-lived", ["packets:write"]);
    await authenticateBearer(`Bearer ${token}`, "packets:write");
    const revoked = await revokeApiToken(summary.id);
    expect(revoked.revoked_at).not.toBeNull();
    await expectBatonError(authenticateBearer(`Bearer ${token}`, "packets:write"), "unauthenticated");
    // Revoking again keeps the first revocation time.
    expect((await revokeApiToken(summary.id)).revoked_at).toBe(revoked.revoked_at);
  });

  it("revokes by the displayed prefix too", async () => {
    const { token, summary } = await createApiToken("by-display", ["packets:write"]);
    await revokeApiToken(summary.display);
    await expectBatonError(authenticateBearer(`Bearer ${token}`, "packets:write"), "unauthenticated");
    await expectBatonError(revokeApiToken("btn_nothere"), "not_found");
  });

  describe("while another request's transaction rolls back", () => {
    // The SQLite adapter keeps one connection per process: a write made outside a
    // transaction while another request's transaction is open used to be rolled back with it.
    const keyed: IngestSource = { kind: "http", actor: "token:test", idempotency: { tokenId: "tok_rollback", key: "k" } };
    const refusedIngest = (index: number) =>
      ingestPacket({ summary: `another body ${index}`, project: "tokens", branch: "rollback" }, keyed);

    beforeAll(async () => {
      await ingestPacket({ summary: "first body", project: "tokens", branch: "rollback" }, keyed);
    });

    it("keeps a revocation", async () => {
      for (let index = 0; index < 5; index++) {
        const { token, summary } = await createApiToken(`revoked-during-rollback-${index}`, ["packets:write"]);
        const [ingest, revoke] = await Promise.allSettled([refusedIngest(index), revokeApiToken(summary.id)]);
        expect(ingest.status === "rejected" && (ingest.reason as BatonError).code).toBe("idempotency_key_reused");
        expect(revoke.status).toBe("fulfilled");
        const db = await database();
        expect((await db.apiToken.findUniqueOrThrow({ where: { id: summary.id } })).revokedAt).toBeInstanceOf(Date);
        await expectBatonError(authenticateBearer(`Bearer ${token}`, "packets:write"), "unauthenticated");
      }
    });

    it("keeps a created token", async () => {
      for (let index = 0; index < 5; index++) {
        // Several refused requests keep a transaction open for the whole window.
        const refused = Array.from({ length: 5 }, (_, n) => refusedIngest(100 + 10 * index + n));
        const [created, ...ingests] = await Promise.allSettled([
          createApiToken(`created-during-rollback-${index}`, ["packets:read"]),
          ...refused,
        ]);
        expect(ingests.map((ingest) => ingest.status)).toEqual(Array(5).fill("rejected"));
        if (created!.status !== "fulfilled") throw created!.reason;
        expect(await authenticateBearer(`Bearer ${created.value.token}`, "packets:read")).toMatchObject({
          id: created.value.summary.id,
        });
      }
    });
  });
});

describe("token audit", () => {
  it("records token_created and token_revoked in the ledger, without the secret", async () => {
    const { token, summary } = await createApiToken("audited", ["packets:read"], "cli:mei");
    await revokeApiToken(summary.id, "cli:mei");
    const db = await database();
    const events = await db.ledgerEvent.findMany({ where: { kind: { in: ["token_created", "token_revoked"] } }, orderBy: { seq: "asc" } });
    const mine = events.filter((event) => JSON.parse(event.data).token_id === summary.id);
    expect(mine.map((event) => [event.kind, event.actor])).toEqual([
      ["token_created", "cli:mei"],
      ["token_revoked", "cli:mei"],
    ]);
    for (const event of mine) {
      expect(event.data).not.toContain(token.split("_")[2]);
      expect(JSON.parse(event.data)).toMatchObject({ display: summary.display, scopes: ["packets:read"] });
    }
  });
});
