import { beforeAll, describe, expect, it } from "vitest";
import * as answers from "@/app/api/v1/answers/route";
import * as packets from "@/app/api/v1/packets/route";
import * as triage from "@/app/api/v1/risks/triage/route";
import * as threadAnswers from "@/app/api/v1/threads/[key]/answers/route";
import * as decision from "@/app/api/v1/threads/[key]/decision/route";
import * as threads from "@/app/api/v1/threads/route";
import * as tokenById from "@/app/api/v1/tokens/[id]/route";
import * as tokens from "@/app/api/v1/tokens/route";
import * as userById from "@/app/api/v1/users/[id]/route";
import * as users from "@/app/api/v1/users/route";
import * as deliveries from "@/app/api/v1/webhooks/[id]/deliveries/route";
import * as webhookById from "@/app/api/v1/webhooks/[id]/route";
import * as webhooks from "@/app/api/v1/webhooks/route";
import { createApiToken, revokeApiToken, TOKEN_SCOPES } from "../../lib/auth/tokens";
import { ingestPacket } from "../../lib/ingest/ingest";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { recordAttempts, recordFigure } from "@/testing/reliability";
import { countRows, errorCodeOf } from "@/testing/hardening/ingest-harness";

/**
 * Access (issue 8, item 8), what the other suites leave out: an API token, even
 * one holding every scope, cannot reach any endpoint meant for people; each scope
 * opens only its own endpoints. (Revocation, viewers, cross-origin requests and
 * cookie attributes: lib/auth/*.test.ts, e2e/api.spec.ts, people.spec.ts, accounts.spec.ts.)
 */

freshDatabaseForThisFile();

const ORIGIN = "http://baton.test";
type Handler = (request: Request, segment: { params: Promise<never> }) => Promise<Response>;

const PEOPLE_ONLY: [string, string, Handler][] = [
  ["POST", "/api/v1/answers", answers.POST as Handler],
  ["POST", "/api/v1/risks/triage", triage.POST as Handler],
  ["POST", "/api/v1/threads/access%2Fthread/answers", threadAnswers.POST as Handler],
  ["POST", "/api/v1/threads/access%2Fthread/decision", decision.POST as Handler],
  ["GET", "/api/v1/tokens", tokens.GET as Handler],
  ["POST", "/api/v1/tokens", tokens.POST as Handler],
  ["DELETE", "/api/v1/tokens/<token>", tokenById.DELETE as Handler],
  ["GET", "/api/v1/users", users.GET as Handler],
  ["POST", "/api/v1/users", users.POST as Handler],
  ["PATCH", "/api/v1/users/usr_x", userById.PATCH as Handler],
  ["GET", "/api/v1/webhooks", webhooks.GET as Handler],
  ["POST", "/api/v1/webhooks", webhooks.POST as Handler],
  ["PATCH", "/api/v1/webhooks/whk_x", webhookById.PATCH as Handler],
  ["DELETE", "/api/v1/webhooks/whk_x", webhookById.DELETE as Handler],
  ["GET", "/api/v1/webhooks/whk_x/deliveries", deliveries.GET as Handler],
];

let everyScope = "";
let everyScopeId = "";

beforeAll(async () => {
  const created = await createApiToken("every scope", [...TOKEN_SCOPES]);
  everyScope = created.token;
  everyScopeId = created.summary.id;
  await ingestPacket({ thread: "access/thread", summary: "for access checks", next_action: "continue" }, { kind: "http", actor: "test" });
});

function call(handler: Handler, method: string, url: string, token: string, body?: unknown): Promise<Response> {
  const request = new Request(`${ORIGIN}${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, origin: ORIGIN, host: "baton.test", "content-type": "application/json" },
    body: method === "GET" ? undefined : JSON.stringify(body ?? {}),
  });
  const params = { key: "access/thread", id: url.split("/")[4] ?? "x" } as never;
  return handler(request, { params: Promise.resolve(params) });
}

describe("what an API token can reach", () => {
  it("reaches no endpoint meant for people, even holding every scope, and changes nothing", async () => {
    const before = await countRows();
    let allowed = 0;
    for (const [method, template, handler] of PEOPLE_ONLY) {
      const url = template.replace("<token>", everyScopeId);
      const response = await call(handler, method, url, everyScope, { username: "intruder", password: "a long enough password", role: "admin", url: "https://example.com/hook", scopes: ["packets:write"], name: "minted" });
      const body: unknown = await response.json();
      if (response.status !== 401 && response.status !== 403) allowed++;
      expect([401, 403], `${method} ${url}: ${response.status} ${JSON.stringify(body)}`).toContain(response.status);
    }
    expect(await countRows()).toEqual(before);
    recordFigure("access", "people-only endpoints refused to a token with every scope", PEOPLE_ONLY.length, "401/403, nothing stored");
    recordAttempts("access", "people-only endpoints called with a token holding every scope", PEOPLE_ONLY.length, allowed, "got through: any answer but 401/403");
  });

  it("opens only the endpoints of the token's own scopes", async () => {
    const packet = { thread: "access/scoped", summary: "scoped", next_action: "continue" };
    for (const scope of TOKEN_SCOPES) {
      const { token } = await createApiToken(`only ${scope}`, [scope]);
      const write = await call(packets.POST as Handler, "POST", "/api/v1/packets", token, { ...packet, summary: `scoped ${scope}` });
      const read = await call(threads.GET as Handler, "GET", "/api/v1/threads", token);
      expect(write.status, scope).toBe(scope === "packets:write" ? 201 : 403);
      expect(read.status, scope).toBe(scope === "packets:read" ? 200 : 403);
      if (scope !== "packets:write") expect(errorCodeOf(await write.json())).toBe("forbidden");
    }
  });

  it("refuses a revoked token on its very next request", async () => {
    const { token, summary } = await createApiToken("soon revoked", ["packets:write"]);
    expect((await call(packets.POST as Handler, "POST", "/api/v1/packets", token, { summary: "before revoking" })).status).toBe(201);
    await revokeApiToken(summary.id);
    const after = await call(packets.POST as Handler, "POST", "/api/v1/packets", token, { summary: "after revoking" });
    expect([after.status, errorCodeOf(await after.json())]).toEqual([401, "unauthenticated"]);
  });
});
