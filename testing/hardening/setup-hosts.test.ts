import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as setup } from "@/app/api/v1/setup/route";
import { POST as ingest } from "@/app/api/v1/packets/route";
import { GET as board } from "@/app/api/v1/board/route";
import { hasAnyUser } from "../../lib/auth/users";
import { resetConfig } from "../../lib/server/config";
import { announceFirstRun } from "../../lib/server/first-run";
import { freshDatabaseForThisFile } from "@/testing/temp-database";

/**
 * Hardening round 2 (decision 030): first-run setup only from loopback or with
 * the one-time code printed at start; BATON_ALLOWED_HOSTS checked on every API route.
 */

freshDatabaseForThisFile();

const ACCOUNT = { username: "root", password: "a long enough password" };

function postSetup(host: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  return setup(
    new Request(`http://${host}/api/v1/setup`, {
      method: "POST",
      headers: { host, origin: `http://${host}`, "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    }),
  );
}

async function status(response: Response): Promise<{ status: number; body: { error?: { code: string; message: string } } }> {
  return { status: response.status, body: (await response.json()) as { error?: { code: string; message: string } } };
}

describe("POST /api/v1/setup on a fresh install reached by another name (DNS rebinding, or all interfaces)", () => {
  let code: string;
  beforeAll(async () => {
    const printed: string[] = [];
    await announceFirstRun((line) => printed.push(line));
    expect(printed).toHaveLength(1);
    const match = /^baton: first run: open http:\/\/localhost:3000\/setup\?code=([A-Za-z0-9_-]{43}) /.exec(printed[0] ?? "");
    expect(match, printed[0]).not.toBeNull();
    code = match?.[1] ?? "";
  });

  it("refuses a non-loopback Host without the code with 403 saying where the code is printed", async () => {
    const { status: got, body } = await status(await postSetup("evil.example:3000", ACCOUNT));
    expect(got).toBe(403);
    expect(body.error?.message).toContain("baton: first run: open");
    expect(await hasAnyUser()).toBe(false);
  });

  it("refuses a wrong code with 403", async () => {
    expect((await postSetup("baton.example.com", { ...ACCOUNT, code: code.slice(0, -2) + "xx" })).status).toBe(403);
    expect((await postSetup("baton.example.com", { ...ACCOUNT, code: "" })).status).toBe(403);
    expect(await hasAnyUser()).toBe(false);
  });

  it("refuses a loopback Host from a peer that is not loopback", async () => {
    expect((await postSetup("127.0.0.1:3000", ACCOUNT, { "x-forwarded-for": "203.0.113.7" })).status).toBe(403);
    // The server's own stamp of the socket address wins over a forged X-Forwarded-For.
    expect((await postSetup("127.0.0.1:3000", ACCOUNT, { "x-forwarded-for": "127.0.0.1", "x-baton-client-address": "203.0.113.7" })).status).toBe(403);
    expect((await postSetup("localhost:3000", ACCOUNT, { "x-forwarded-host": "evil.example" })).status).toBe(403);
    expect(await hasAnyUser()).toBe(false);
  });

  it("creates the admin with the right code", async () => {
    const response = await postSetup("baton.example.com", { ...ACCOUNT, code });
    expect(response.status, await response.clone().text()).toBe(201);
    expect(await hasAnyUser()).toBe(true);
  });

  it("takes the code once: used again it is refused (403, not 409)", async () => {
    const { status: got, body } = await status(await postSetup("baton.example.com", { username: "second", password: "another long password", code }));
    expect(got).toBe(403);
    expect(body.error?.message).toContain("not valid (or was used already)");
  });

  it("prints no code at start once anyone has an account", async () => {
    const printed: string[] = [];
    await announceFirstRun((line) => printed.push(line));
    expect(printed).toEqual([]);
  });

  it("lets loopback through without a code (the e2e first-run path): here 409, an admin exists", async () => {
    expect((await postSetup("127.0.0.1:3210", { username: "second", password: "another long password" }, { "x-forwarded-for": "127.0.0.1" })).status).toBe(409);
  });
});

describe("BATON_ALLOWED_HOSTS on API routes", () => {
  const saved = process.env.BATON_ALLOWED_HOSTS;
  beforeAll(() => {
    process.env.BATON_ALLOWED_HOSTS = "baton.example.com";
    resetConfig();
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.BATON_ALLOWED_HOSTS;
    else process.env.BATON_ALLOWED_HOSTS = saved;
    resetConfig();
  });

  const segment = { params: Promise.resolve({}) as Promise<Record<string, never>> };
  const read = (host: string) => board(new Request(`http://${host}/api/v1/board`, { headers: { host } }));

  it("refuses a Host not listed with 421 before anything else (the board, ingest, setup)", async () => {
    const { status: got, body } = await status(await read("evil.example"));
    expect(got).toBe(421);
    expect(body.error?.code).toBe("misdirected_request");
    const push = await ingest(
      new Request("http://evil.example/api/v1/packets", {
        method: "POST",
        headers: { host: "evil.example", authorization: "Bearer nope", "content-type": "application/json" },
        body: "{}",
      }),
      segment,
    );
    expect(push.status).toBe(421);
    expect((await postSetup("evil.example", ACCOUNT)).status).toBe(421);
  });

  it("lets listed and loopback hosts through to the route's own checks (401: nobody signed in)", async () => {
    expect((await read("baton.example.com")).status).toBe(401);
    expect((await read("localhost:3000")).status).toBe(401);
  });
});
