import { beforeAll, describe, expect, it } from "vitest";
import { expectBatonError } from "@/testing/expect-baton-error";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { createApiToken } from "./tokens";
import { assertSameOrigin, cookieOf, personOfRequest, requirePerson, servedOverHttps } from "./person";
import type { Person, Role } from "./roles";
import { endSession, startSession } from "./sessions";
import { createFirstAdmin, createUser } from "./users";

freshDatabaseForThisFile();

const PASSWORD = "a long enough password";
const HOST = "baton.local:3000";
const SAME_ORIGIN = { host: HOST, origin: `http://${HOST}` };

function request(headers: Record<string, string>, url = `http://${HOST}/api/v1/threads/t/decision`): Request {
  return new Request(url, { method: "POST", headers });
}

const withSession = (secret: string, extra: Record<string, string> = SAME_ORIGIN) => request({ ...extra, cookie: `theme=dark; baton_session=${secret}` });

const people = {} as Record<Role, Person>;
const secrets = {} as Record<Role, string>;

beforeAll(async () => {
  people.admin = await createFirstAdmin({ username: "the-admin", password: PASSWORD });
  for (const role of ["operator", "viewer"] as const) {
    const user = await createUser(people.admin, { username: `the-${role}`, password: PASSWORD, role });
    people[role] = { id: user.id, username: user.username, role: user.role };
  }
  for (const role of ["admin", "operator", "viewer"] as const) secrets[role] = (await startSession(people[role], "password")).secret;
});

describe("cookieOf", () => {
  const cookies = (header: string | null) => request(header === null ? {} : { cookie: header });

  it("finds a cookie among others, trimming spaces", () => {
    expect(cookieOf(cookies("a=1; baton_session=abc; b=2"), "baton_session")).toBe("abc");
    expect(cookieOf(cookies("baton_session=abc"), "baton_session")).toBe("abc");
    expect(cookieOf(cookies("  baton_session =  abc  ;x=y"), "baton_session")).toBe("abc");
  });

  it("keeps everything after the first = as the value", () => {
    expect(cookieOf(cookies("baton_session=ab=cd=="), "baton_session")).toBe("ab=cd==");
  });

  it("takes the first of repeated cookies", () => {
    expect(cookieOf(cookies("baton_session=first; baton_session=second"), "baton_session")).toBe("first");
  });

  it("is null when the cookie is absent, only a prefix or suffix of another name, or nameless", () => {
    expect(cookieOf(cookies(null), "baton_session")).toBeNull();
    expect(cookieOf(cookies(""), "baton_session")).toBeNull();
    expect(cookieOf(cookies("xbaton_session=1; baton_session_old=2"), "baton_session")).toBeNull();
    expect(cookieOf(cookies("=baton_session; baton_session"), "baton_session")).toBeNull();
  });

  it("gives an empty value as an empty string", () => {
    expect(cookieOf(cookies("baton_session="), "baton_session")).toBe("");
  });
});

describe("servedOverHttps", () => {
  it("trusts the first X-Forwarded-Proto, else the request's own scheme", () => {
    expect(servedOverHttps(request({}, "https://baton.example/"))).toBe(true);
    expect(servedOverHttps(request({}, "http://baton.example/"))).toBe(false);
    expect(servedOverHttps(request({ "x-forwarded-proto": "https" }, "http://127.0.0.1:3000/"))).toBe(true);
    expect(servedOverHttps(request({ "x-forwarded-proto": " https , http" }, "http://127.0.0.1:3000/"))).toBe(true);
    expect(servedOverHttps(request({ "x-forwarded-proto": "http" }, "https://baton.example/"))).toBe(false);
  });
});

describe("assertSameOrigin", () => {
  const refusedAs = (headers: Record<string, string>) => {
    try {
      assertSameOrigin(request(headers));
    } catch (error) {
      return error;
    }
    return null;
  };

  it("passes an Origin whose host is the Host header's", () => {
    expect(refusedAs(SAME_ORIGIN)).toBeNull();
    expect(refusedAs({ host: HOST, origin: `https://${HOST}` })).toBeNull();
  });

  it("compares with X-Forwarded-Host when a proxy sets it", () => {
    expect(refusedAs({ host: "127.0.0.1:3000", "x-forwarded-host": "baton.example", origin: "https://baton.example" })).toBeNull();
    expect(refusedAs({ host: "baton.example", "x-forwarded-host": "inner:3000", origin: "https://baton.example" })).toMatchObject({ code: "forbidden" });
  });

  it.each([
    ["another site", { host: HOST, origin: "https://evil.example" }],
    ["another port of the same host", { host: HOST, origin: "http://baton.local:4000" }],
    ["a sibling subdomain", { host: HOST, origin: "http://x.baton.local:3000" }],
    ["Origin: null (sandboxed or opaque pages)", { host: HOST, origin: "null" }],
    ["an Origin without a Host header to match", { origin: `http://${HOST}` }],
    ["another origin that also claims Sec-Fetch-Site: same-origin", { host: HOST, origin: "https://evil.example", "sec-fetch-site": "same-origin" }],
  ])("refuses %s (403 forbidden)", (_what, headers) => {
    const error = refusedAs(headers);
    expect(error).toMatchObject({ code: "forbidden", status: 403 });
    expect((error as Error).message).toMatch(/Origin header names another site/);
  });

  it("passes no Origin when the browser says Sec-Fetch-Site: same-origin", () => {
    expect(refusedAs({ host: HOST, "sec-fetch-site": "same-origin" })).toBeNull();
  });

  it.each([
    ["neither Origin nor Sec-Fetch-Site", { host: HOST }],
    ["Sec-Fetch-Site: same-site", { host: HOST, "sec-fetch-site": "same-site" }],
    ["Sec-Fetch-Site: cross-site", { host: HOST, "sec-fetch-site": "cross-site" }],
    ["Sec-Fetch-Site: none", { host: HOST, "sec-fetch-site": "none" }],
  ])("refuses %s without an Origin", (_what, headers) => {
    const error = refusedAs(headers);
    expect(error).toMatchObject({ code: "forbidden" });
    expect((error as Error).message).toMatch(/send the Origin header/);
  });
});

describe("personOfRequest", () => {
  it("is the person behind the session cookie, or null", async () => {
    expect(await personOfRequest(withSession(secrets.viewer))).toEqual(people.viewer);
    expect(await personOfRequest(request(SAME_ORIGIN))).toBeNull();
    expect(await personOfRequest(withSession("forged-secret"))).toBeNull();
  });
});

describe("requirePerson", () => {
  it("refuses any Authorization header, even beside a valid session and a valid token", async () => {
    const { token } = await createApiToken("ci", ["packets:read", "packets:write"]);
    for (const authorization of [`Bearer ${token}`, "Bearer nonsense", "Basic dXNlcjpwYXNz"]) {
      const error = await expectBatonError(requirePerson(request({ ...SAME_ORIGIN, cookie: `baton_session=${secrets.admin}`, authorization }), "viewer"), "forbidden");
      expect(error.message).toMatch(/API tokens cannot act as a person/);
    }
  });

  it("refuses another origin even with a valid session", async () => {
    await expectBatonError(requirePerson(withSession(secrets.admin, { host: HOST, origin: "https://evil.example" }), "viewer"), "forbidden");
  });

  it("answers unauthenticated without a live session", async () => {
    const error = await expectBatonError(requirePerson(request(SAME_ORIGIN), "viewer"), "unauthenticated");
    expect(error.status).toBe(401);
    await expectBatonError(requirePerson(withSession("forged-secret"), "viewer"), "unauthenticated");
    const ended = await startSession(people.operator, "password");
    await endSession(ended.secret);
    await expectBatonError(requirePerson(withSession(ended.secret), "operator"), "unauthenticated");
  });

  it("refuses a role below the one needed, saying both", async () => {
    const error = await expectBatonError(requirePerson(withSession(secrets.viewer), "operator"), "forbidden");
    expect(error.details).toEqual({ role: "viewer", needed: "operator" });
    expect(error.message).toContain("needs the operator role; you are viewer");
    const operator = await expectBatonError(requirePerson(withSession(secrets.operator), "admin"), "forbidden");
    expect(operator.details).toEqual({ role: "operator", needed: "admin" });
  });

  it("returns the person whose role is enough", async () => {
    expect(await requirePerson(withSession(secrets.viewer), "viewer")).toEqual(people.viewer);
    expect(await requirePerson(withSession(secrets.operator), "operator")).toEqual(people.operator);
    expect(await requirePerson(withSession(secrets.admin), "operator")).toEqual(people.admin);
    expect(await requirePerson(withSession(secrets.admin), "admin")).toEqual(people.admin);
    expect(await requirePerson(withSession(secrets.operator, { host: HOST, "sec-fetch-site": "same-origin" }), "operator")).toEqual(people.operator);
  });
});
