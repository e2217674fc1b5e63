import { beforeAll, describe, expect, it } from "vitest";
import { expectBatonError } from "@/testing/expect-baton-error";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { authoriseRead } from "./read-access";
import type { Person } from "./roles";
import { endSession, startSession } from "./sessions";
import { createApiToken, revokeApiToken } from "./tokens";
import { createFirstAdmin, createUser } from "./users";

freshDatabaseForThisFile();

let viewer: Person;
let viewerSecret: string;
let readToken: string;
let writeOnlyToken: string;

beforeAll(async () => {
  const admin = await createFirstAdmin({ username: "the-admin", password: "a long enough password" });
  const user = await createUser(admin, { username: "the-viewer", password: "a long enough password", role: "viewer" });
  viewer = { id: user.id, username: user.username, role: user.role };
  viewerSecret = (await startSession(viewer, "password")).secret;
  readToken = (await createApiToken("reader", ["packets:read"])).token;
  writeOnlyToken = (await createApiToken("writer", ["packets:write"])).token;
});

const read = (headers: Record<string, string>) => authoriseRead(new Request("http://127.0.0.1:3000/api/v1/board", { headers }));
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const cookie = (secret: string) => ({ cookie: `baton_session=${secret}` });

describe("authoriseRead", () => {
  it("accepts an API token with packets:read", async () => {
    expect(await read(bearer(readToken))).toMatchObject({ kind: "token", token: { name: "reader", scopes: ["packets:read"] } });
  });

  it("accepts a signed-in person of any role", async () => {
    expect(await read(cookie(viewerSecret))).toEqual({ kind: "person", person: viewer });
  });

  it("refuses a request with neither (401), whatever Sec-Fetch-Site says", async () => {
    for (const site of [undefined, "same-origin", "same-site", "cross-site", "none"]) {
      const error = await expectBatonError(read(site ? { "sec-fetch-site": site } : {}), "unauthenticated");
      expect(error.message).toMatch(/Sign in to Baton, or send an API token/);
    }
  });

  it("refuses an ended session", async () => {
    const { secret } = await startSession(viewer, "password");
    await endSession(secret);
    await expectBatonError(read(cookie(secret)), "unauthenticated");
  });

  it("checks a token that is sent, whatever else comes with it", async () => {
    const session = cookie(viewerSecret);
    await expectBatonError(read({ ...bearer("btn_aaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"), ...session }), "unauthenticated");
    await expectBatonError(read({ ...bearer(writeOnlyToken), ...session }), "forbidden");
    const revoked = await createApiToken("revoked", ["packets:read"]);
    await revokeApiToken(revoked.summary.id);
    await expectBatonError(read({ ...bearer(revoked.token), ...session }), "unauthenticated");
  });
});
