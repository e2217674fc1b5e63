import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createApiToken } from "../auth/tokens";
import { createFirstAdmin, createUser } from "../auth/users";
import { SESSION_COOKIE, startSession } from "../auth/sessions";
import type { Person } from "../auth/roles";
import { BatonError } from "../core/errors";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { checkResponses, defineRoute, reply, routeOf, type HttpMethod, type RouteAuth, type RouteBody, type RouteContext, type RouteDefinition, type RouteResponse } from "./route";

/** defineRoute over real requests, tokens and sessions: who is refused, what bad input is told, what a bad answer becomes. */

freshDatabaseForThisFile();

const ORIGIN = "http://baton.test";
const PASSWORD = "a long enough password";
let readToken: string;
let writeToken: string;
let viewerCookie: string;
let operatorCookie: string;

beforeAll(async () => {
  const admin = await createFirstAdmin({ username: "route-admin", password: PASSWORD });
  const cookieOf = async (person: Person) => `${SESSION_COOKIE}=${(await startSession(person, "password")).secret}`;
  viewerCookie = await cookieOf(await createUser(admin, { username: "route-viewer", password: PASSWORD, role: "viewer" }));
  operatorCookie = await cookieOf(await createUser(admin, { username: "route-operator", password: PASSWORD, role: "operator" }));
  readToken = (await createApiToken("route-reader", ["packets:read"], "test")).token;
  writeToken = (await createApiToken("route-writer", ["packets:write"], "test")).token;
});

afterEach(() => {
  checkResponses(true);
  vi.restoreAllMocks();
});

function request(path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Request {
  const { method = "GET", headers = {}, body } = init;
  return new Request(`${ORIGIN}${path}`, {
    method,
    headers: { host: "baton.test", ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function answer(response: Response): Promise<{ status: number; body: { error?: { code: string; message: string; details: unknown } } & Record<string, unknown> }> {
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {} };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const okSchema = z.object({ ok: z.literal(true), who: z.string() });
/** A route of the auth tests: under `auth`, it answers 200 `{ ok: true, who }`, naming who it served. */
function whoRoute<const A extends RouteAuth>(method: HttpMethod, path: string, auth: A, who: (context: RouteContext<A, undefined, undefined, undefined>) => string) {
  return defineRoute({ method, path, summary: "test", auth, response: { kind: "json", status: 200, schema: okSchema }, handler: (context) => ({ ok: true as const, who: who(context) }) });
}

type PublicAuth = { kind: "public" };
/** A route anyone may call, for the tests of input and answers: only what a test varies is written out. */
function publicRoute<P extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined, B extends RouteBody | undefined = undefined, const R extends RouteResponse = RouteResponse>(
  definition: Omit<RouteDefinition<PublicAuth, P, Q, B, R>, "summary" | "auth">,
) {
  return defineRoute<PublicAuth, P, Q, B, R>({ ...definition, summary: "test", auth: { kind: "public" } });
}

describe("auth", () => {
  const tokenRoute = whoRoute("POST", "/test/token", { kind: "token", scope: "packets:write" }, ({ token }) => token.name);
  const readerRoute = whoRoute("GET", "/test/reader", { kind: "reader" }, ({ reader }) => (reader.kind === "token" ? reader.token.name : reader.person.username));
  const operatorRoute = whoRoute("POST", "/test/operator", { kind: "person", role: "operator" }, ({ person }) => person.username);
  const fromPagesRoute = whoRoute("POST", "/test/pages", { kind: "public", fromPages: true }, () => "anyone");

  it("token: 401 without one, 403 without the scope, the handler with it", async () => {
    expect((await answer(await tokenRoute(request("/test/token", { method: "POST" })))).status).toBe(401);
    const wrongScope = await answer(await tokenRoute(request("/test/token", { method: "POST", headers: bearer(readToken) })));
    expect([wrongScope.status, wrongScope.body.error?.code]).toEqual([403, "forbidden"]);
    expect(await answer(await tokenRoute(request("/test/token", { method: "POST", headers: bearer(writeToken) })))).toEqual({ status: 200, body: { ok: true, who: "route-writer" } });
  });

  it("reader: a packets:read token or any signed-in person; nobody is 401, a write-only token 403", async () => {
    expect((await answer(await readerRoute(request("/test/reader")))).status).toBe(401);
    expect((await answer(await readerRoute(request("/test/reader", { headers: bearer(writeToken) })))).status).toBe(403);
    expect((await answer(await readerRoute(request("/test/reader", { headers: bearer(readToken) })))).body.who).toBe("route-reader");
    expect((await answer(await readerRoute(request("/test/reader", { headers: { cookie: viewerCookie } })))).body.who).toBe("route-viewer");
  });

  it("person: never a token; signed in, from Baton's pages, with the role", async () => {
    const post = (headers: Record<string, string>) => operatorRoute(request("/test/operator", { method: "POST", headers }));
    expect((await answer(await post({ ...bearer(writeToken), origin: ORIGIN }))).body.error?.message).toMatch(/API tokens cannot act as a person/);
    expect((await answer(await post({ origin: ORIGIN }))).status).toBe(401);
    expect((await answer(await post({ cookie: operatorCookie, origin: "http://elsewhere.test" }))).status).toBe(403);
    const viewer = await answer(await post({ cookie: viewerCookie, origin: ORIGIN }));
    expect([viewer.status, viewer.body.error?.details]).toEqual([403, { role: "viewer", needed: "operator" }]);
    expect((await answer(await post({ cookie: operatorCookie, origin: ORIGIN }))).body.who).toBe("route-operator");
  });

  it("public from pages: refused without Origin or from another site", async () => {
    expect((await answer(await fromPagesRoute(request("/test/pages", { method: "POST" })))).status).toBe(403);
    expect((await answer(await fromPagesRoute(request("/test/pages", { method: "POST", headers: { origin: "http://elsewhere.test" } })))).status).toBe(403);
    expect((await answer(await fromPagesRoute(request("/test/pages", { method: "POST", headers: { origin: ORIGIN } })))).status).toBe(200);
  });
});

describe("input", () => {
  let calls = 0;
  const inputRoute = publicRoute({
    method: "POST",
    path: "/test/input/{id}",
    params: z.object({ id: z.string().regex(/^n\d+$/, "must be n and digits") }),
    query: z.object({ limit: z.coerce.number({ error: "limit must be a number" }).int().max(10, "limit must be at most 10").default(5) }),
    body: { schema: z.strictObject({ name: z.string({ error: "name must be a string" }), tags: z.array(z.string()).optional() }), name: "thing" },
    response: { kind: "json", status: 201, schema: z.object({ id: z.string(), limit: z.number(), name: z.string() }) },
    handler: ({ params, query, body }) => {
      calls++;
      return { id: params.id, limit: query.limit, name: body.name };
    },
  });
  const post = (id: string, query: string, body: unknown, headers: Record<string, string> = {}) =>
    inputRoute(request(`/test/input/${id}${query}`, { method: "POST", body, headers }), { params: Promise.resolve({ id }) });

  it("parses path, query and body and hands the handler typed values", async () => {
    expect(await answer(await post("n1", "?limit=3", { name: "x" }))).toEqual({ status: 201, body: { id: "n1", limit: 3, name: "x" } });
  });

  it("answers 400 naming each bad body field, and never runs the handler", async () => {
    const before = calls;
    const bad = await answer(await post("n1", "", { name: 7, tags: ["a", 2], extra: true }));
    expect(bad.status).toBe(400);
    expect(bad.body.error?.code).toBe("invalid_request");
    expect(bad.body.error?.message).toMatch(/^Bad thing: /);
    const fields = (bad.body.error?.details as { fields: { field: string; problem: string }[] }).fields;
    expect(fields.map((field) => field.field)).toEqual(["name", "tags.1", "(body)"]);
    expect(fields[0]!.problem).toBe("name must be a string");
    expect(calls).toBe(before);
  });

  it("names a bad query parameter and a bad path parameter", async () => {
    expect((await answer(await post("n1", "?limit=50", { name: "x" }))).body.error?.message).toBe("Bad query: limit: limit must be at most 10.");
    expect((await answer(await post("zz", "", { name: "x" }))).body.error?.message).toBe("Bad path: id: must be n and digits.");
  });

  it("refuses a body that is not JSON: 415 for another type, 400 for broken JSON", async () => {
    expect((await answer(await post("n1", "", "name=x", { "content-type": "application/x-www-form-urlencoded" }))).body.error?.code).toBe("unsupported_media_type");
    expect((await answer(await post("n1", "", "{nope"))).body.error?.code).toBe("invalid_json");
  });
});

describe("answers", () => {
  const brokenRoute = (status: number) =>
    publicRoute({
      method: "GET",
      path: "/test/broken",
      response: { kind: "json", status: 200, schema: z.object({ count: z.number().int(), secret_hint: z.string() }) },
      // What a lib change that forgets the DTO would return: a wrong type, a missing field, a leaked one.
      handler: () => reply({ count: "3", password_hash: "argon2id$..." } as never, { status }),
    });

  it("an answer that breaks its schema is a logged 500 naming the fields, never echoing values", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const broken = await answer(await brokenRoute(200)(request("/test/broken")));
    expect([broken.status, broken.body.error?.code]).toEqual([500, "internal"]);
    const fields = (broken.body.error?.details as { fields: { field: string }[] }).fields.map((field) => field.field);
    expect(fields).toEqual(["count", "secret_hint"]);
    expect(JSON.stringify(broken.body)).not.toContain("argon2id");
    expect(logged).toHaveBeenCalledWith("baton: GET /test/broken answered outside its schema", expect.any(Array));
  });

  it("a status the route does not declare is a 500 too", async () => {
    checkResponses(false);
    const undeclared = await answer(await brokenRoute(202)(request("/test/broken")));
    expect([undeclared.status, undeclared.body.error?.message]).toEqual([500, "GET /test/broken answered 202, which it does not declare."]);
  });

  it("with checks off (production), the handler's answer is sent as it is", async () => {
    checkResponses(false);
    expect(await answer(await brokenRoute(200)(request("/test/broken")))).toEqual({ status: 200, body: { count: "3", password_hash: "argon2id$..." } });
  });

  it("a handler that throws gets the one error body: a BatonError as it is, anything else a logged 500 that tells nothing", async () => {
    const throwing = (error: unknown) =>
      publicRoute({
        method: "DELETE",
        path: "/test/throws",
        response: { kind: "empty", status: 204 },
        handler: () => {
          throw error;
        },
      });
    const conflict = await answer(await throwing(new BatonError("conflict", "It moved on.", { current: 2 }))(request("/test/throws", { method: "DELETE" })));
    expect(conflict).toEqual({ status: 409, body: { error: { code: "conflict", message: "It moved on.", details: { current: 2 } } } });
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const crash = await answer(await throwing(new Error("connection string postgresql://user:pw@db"))(request("/test/throws", { method: "DELETE" })));
    expect(crash.status).toBe(500);
    expect(crash.body.error?.code).toBe("internal");
    expect(JSON.stringify(crash.body)).not.toContain("pw@db");
  });

  it("conditional JSON: a strong ETag, 304 for a matching If-None-Match, and 304 with the tag when the handler says so", async () => {
    const conditional = publicRoute({
      method: "GET",
      path: "/test/conditional",
      query: z.object({ unchanged: z.string().optional() }),
      response: { kind: "json", status: 200, conditional: true, schema: z.object({ n: z.number() }) },
      handler: ({ query }) => reply({ n: 1 }, { status: query.unchanged ? 304 : 200, headers: { "baton-extra": "yes" } }),
    });
    const first = await conditional(request("/test/conditional"));
    const etag = first.headers.get("etag")!;
    expect([first.status, await first.json(), first.headers.get("baton-extra")]).toEqual([200, { n: 1 }, "yes"]);
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
    expect((await conditional(request("/test/conditional", { headers: { "if-none-match": etag } }))).status).toBe(304);
    const unchanged = await conditional(request("/test/conditional?unchanged=1"));
    expect([unchanged.status, unchanged.headers.get("etag"), await unchanged.text()]).toEqual([304, etag, ""]);
  });

  it("a handler-built answer must have its declared content type", async () => {
    const markdown = (type: string) =>
      publicRoute({
        method: "GET",
        path: "/test/markdown",
        response: { kind: "markdown", status: 200, contentType: "text/markdown", description: "test" },
        handler: () => new Response("# hi", { headers: { "content-type": type } }),
      });
    expect((await markdown("text/markdown; charset=utf-8")(request("/test/markdown"))).status).toBe(200);
    expect((await answer(await markdown("text/html")(request("/test/markdown")))).status).toBe(500);
  });

  it("carries its definition for the docs; a plain function carries none", () => {
    const route = defineRoute({ method: "GET", path: "/test/x", summary: "test", auth: { kind: "public" }, response: { kind: "none" }, handler: () => { throw new BatonError("not_found", "no"); } });
    expect(routeOf(route)?.path).toBe("/test/x");
    expect(routeOf(() => new Response())).toBeNull();
  });
});
