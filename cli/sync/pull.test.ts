import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { formatPacket, handoffUrl, pullHandoff, pullTarget } from "./pull";

describe("pullTarget", () => {
  // NODE_ENV, which Next's typings require, plays no part here.
  const envOf = (vars: Record<string, string>) => vars as NodeJS.ProcessEnv;
  const env = envOf({ BATON_URL: "http://env.example:3000/", BATON_TOKEN: "btn_env" });

  it("reads BATON_URL and BATON_TOKEN as push does, with the same default URL", () => {
    expect(pullTarget({}, env)).toEqual({ url: "http://env.example:3000", token: "btn_env" });
    expect(pullTarget({}, envOf({ BATON_TOKEN: "btn_env" }))).toEqual({ url: "http://localhost:3000", token: "btn_env" });
  });

  it("lets --server and --token override the environment", () => {
    expect(pullTarget({ server: "https://baton.example//", token: "btn_opt" }, env)).toEqual({
      url: "https://baton.example",
      token: "btn_opt",
    });
    expect(pullTarget({ token: "btn_opt" }, env)).toEqual({ url: "http://env.example:3000", token: "btn_opt" });
  });

  it("refuses without a token and names the scope reading needs", () => {
    expect(() => pullTarget({ server: "http://x" }, envOf({}))).toThrow(/--token or set BATON_TOKEN.*packets:read/);
  });
});

describe("pullHandoff", () => {
  let server: Server;
  let url: string;
  const received: { url: string | undefined; headers: IncomingHttpHeaders }[] = [];
  // What the fake server answers next.
  let answer: { status: number; body: string; headers?: Record<string, string> };
  const errorBody = (code: string, message: string) => JSON.stringify({ error: { code, message, details: null } });

  beforeAll(async () => {
    server = createServer((request, response) => {
      received.push({ url: request.url, headers: request.headers });
      response.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
      response.end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    received.length = 0;
  });

  it("GETs the handoff with the token, the key encoded as one path segment", async () => {
    const packet = { summary: "s", human: { revision: 0 } };
    answer = { status: 200, body: JSON.stringify(packet), headers: { etag: '"abc"', "baton-packet-id": "pv_1" } };
    const key = "acme/feat@x#topic y?z=1%";
    const outcome = await pullHandoff({ url, token: "btn_t" }, key);

    expect(outcome).toEqual({ ok: true, packetId: "pv_1", etag: '"abc"', packet });
    expect(received).toHaveLength(1);
    expect(received[0]!.url).toBe(`/api/v1/threads/${encodeURIComponent(key)}/handoff`);
    expect(received[0]!.url).toBe("/api/v1/threads/acme%2Ffeat%40x%23topic%20y%3Fz%3D1%25/handoff");
    expect(received[0]!.headers.authorization).toBe("Bearer btn_t");
    expect(handoffUrl({ url, token: "" }, "a b")).toBe(`${url}/api/v1/threads/a%20b/handoff`);
  });

  it("returns the server's error message and status", async () => {
    answer = { status: 403, body: errorBody("forbidden", 'This token lacks the scope "packets:read".') };
    expect(await pullHandoff({ url, token: "t" }, "k")).toEqual({
      ok: false,
      status: 403,
      message: 'This token lacks the scope "packets:read".',
    });
  });

  it("names the thread on a 404, whatever the server said", async () => {
    answer = { status: 404, body: errorBody("not_found", 'Thread "acme@main" was not found.') };
    expect(await pullHandoff({ url, token: "t" }, "acme@main")).toEqual({
      ok: false,
      status: 404,
      message: 'Thread "acme@main" was not found.',
    });

    answer = { status: 404, body: "<html>Not Found</html>" };
    expect(await pullHandoff({ url, token: "t" }, "acme@main")).toMatchObject({
      ok: false,
      status: 404,
      message: 'thread "acme@main" not found: HTTP 404',
    });
  });

  it("fails on an answer that is not a JSON packet, or a body without an error message", async () => {
    for (const body of ["<html></html>", "[1,2]", "null", ""]) {
      answer = { status: 200, body };
      expect(await pullHandoff({ url, token: "t" }, "k"), body).toEqual({
        ok: false,
        status: 200,
        message: `${url} answered with something other than a JSON packet`,
      });
    }
    answer = { status: 500, body: "oops" };
    expect(await pullHandoff({ url, token: "t" }, "k")).toEqual({ ok: false, status: 500, message: "HTTP 500" });
  });

  it("reports an unreachable server", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const outcome = await pullHandoff({ url: `http://127.0.0.1:${port}`, token: "t" }, "k");
    expect(outcome).toMatchObject({ ok: false, status: null });
    if (outcome.ok) return;
    expect(outcome.message).toMatch(new RegExp(`^cannot reach http://127\\.0\\.0\\.1:${port}: fetch failed \\(.*ECONNREFUSED`));
  });
});

describe("formatPacket", () => {
  it("indents by two spaces, keeps key order and ends with a newline", () => {
    expect(formatPacket({ b: 1, a: { c: [1] } })).toBe('{\n  "b": 1,\n  "a": {\n    "c": [\n      1\n    ]\n  }\n}\n');
  });
});
