import { beforeAll, describe, expect, it } from "vitest";
import { GET } from "@/app/api/v1/risks/route";
import { POST } from "@/app/api/v1/risks/triage/route";
import { createFirstAdmin, createUser } from "../../auth/users";
import { startSession, SESSION_COOKIE } from "../../auth/sessions";
import { ingestPacket } from "../../ingest/ingest";
import { riskFingerprint } from "../../contract/fingerprint";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { riskListDto, triageResultDto } from "./dto";

/** The risks endpoints over HTTP: who may read and triage, and what a bad request is told. */

freshDatabaseForThisFile();

const ORIGIN = "http://baton.test";
let operatorCookie: string;
let viewerCookie: string;

beforeAll(async () => {
  const admin = await createFirstAdmin({ username: "root", password: "a long enough password" });
  const operator = await createUser(admin, { username: "opal", password: "a long enough password", role: "operator" });
  const viewer = await createUser(admin, { username: "vera", password: "a long enough password", role: "viewer" });
  const cookieOf = async (user: { id: string; username: string; role: "viewer" | "operator" | "admin" }) =>
    `${SESSION_COOKIE}=${(await startSession({ id: user.id, username: user.username, role: user.role }, "password")).secret}`;
  operatorCookie = await cookieOf(operator);
  viewerCookie = await cookieOf(viewer);
});

const segment = { params: Promise.resolve({}) as Promise<Record<string, never>> };

function triage(body: unknown, cookie = operatorCookie, headers: Record<string, string> = {}): Promise<Response> {
  return POST(
    new Request(`${ORIGIN}/api/v1/risks/triage`, {
      method: "POST",
      headers: { cookie, origin: ORIGIN, host: "baton.test", "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    }),
    segment,
  );
}

const list = (query = "", cookie = viewerCookie) => GET(new Request(`${ORIGIN}/api/v1/risks${query}`, { headers: { cookie } }), segment);

async function json(response: Response, status: number): Promise<unknown> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text);
}

describe("POST /api/v1/risks/triage and GET /api/v1/risks", () => {
  const thread = "routes/risky";
  const detail = "routes: the schema migration is not reversible";
  const target = { thread_key: thread, fingerprint: riskFingerprint(detail) };

  beforeAll(async () => {
    await ingestPacket({ thread, summary: "work", next_action: "continue", open_risks: [{ severity: "high", detail }] }, { kind: "http", actor: "test" });
  });

  it("lets an operator triage in bulk and answers with the new states; a viewer reads them", async () => {
    const answer = triageResultDto.parse(await json(await triage({ action: "resolved", targets: [target] }), 200));
    expect(answer.triaged).toEqual([expect.objectContaining({ ...target, state: "resolved", triage: expect.objectContaining({ by: "opal" }) })]);

    expect(riskListDto.parse(await json(await list("?q=routes"), 200)).groups).toEqual([]);
    const all = riskListDto.parse(await json(await list("?q=routes&state=all"), 200));
    expect(all.groups.map((group) => [group.detail, group.states])).toEqual([[detail, ["resolved"]]]);
  });

  it("refuses viewers, tokens and other origins", async () => {
    expect(((await json(await triage({ action: "acknowledged", targets: [target] }, viewerCookie), 403)) as { error: { code: string } }).error.code).toBe("forbidden");
    await json(await triage({ action: "acknowledged", targets: [target] }, operatorCookie, { authorization: "Bearer btn_x_y" }), 403);
    await json(await triage({ action: "acknowledged", targets: [target] }, operatorCookie, { origin: "http://evil.test" }), 403);
    await json(await list("", ""), 401);
  });

  it("names the bad field or the missing risk in a 400", async () => {
    const bad = (await json(await triage({ action: "snoozed", targets: [target], snoozed_until: "2001-01-01" }), 400)) as { error: { message: string; details: unknown } };
    expect(bad.error.message).toBe("Bad triage: snoozed_until: snoozed_until must be in the future.");
    const missing = (await json(await triage({ action: "acknowledged", targets: [{ thread_key: thread, fingerprint: "gone" }] }), 400)) as { error: { details: unknown } };
    expect(missing.error.details).toEqual({ field: "targets", missing: [{ thread_key: thread, fingerprint: "gone" }] });
    const query = (await json(await list("?state=closed"), 400)) as { error: { message: string } };
    expect(query.error.message).toContain("state");
  });
});
