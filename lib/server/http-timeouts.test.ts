import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * lib/server/http-timeouts.mjs, preloaded the way scripts/start.ts preloads it into
 * `next start`, in a child process that creates its server as Next does
 * (http.createServer(listener), no options): headers sent a line every second
 * (slowloris) are cut with 408 after 10 s, where Node's defaults hold them 60 to 90 s.
 */

let child: ChildProcess;
let port = 0;

beforeAll(async () => {
  const server = `
    const http = require("node:http");
    const server = http.createServer((request, response) => response.end("ok"));
    server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: server.address().port, headersTimeout: server.headersTimeout, requestTimeout: server.requestTimeout })));
  `;
  child = spawn(process.execPath, ["--import", "./lib/server/http-timeouts.mjs", "-e", server], { stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout!.once("data", (data: Buffer) => resolve(data.toString()));
    child.once("exit", (code) => reject(new Error(`the server exited with ${code}`)));
  });
  const started = JSON.parse(line) as { port: number; headersTimeout: number; requestTimeout: number };
  port = started.port;
  expect(started.headersTimeout).toBe(10_000);
  // Headers, BATON_BODY_TIMEOUT_MS (15 s unless set) and a margin: far below Node's 300 s.
  expect(started.requestTimeout).toBe(10_000 + Number(process.env.BATON_BODY_TIMEOUT_MS || 15_000) + 30_000);
});

afterAll(() => {
  child?.kill();
});

describe("the header timeout preloaded into next start", () => {
  it("answers an ordinary request", async () => {
    const response = await fetch(`http://127.0.0.1:${port}/`);
    expect(await response.text()).toBe("ok");
  });

  it("cuts a client that sends its headers slowly after about 10 s", async () => {
    const started = Date.now();
    const socket = net.connect(port, "127.0.0.1");
    socket.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    let lines = 0;
    const timer = setInterval(() => socket.write(`X-Slow-${++lines}: a\r\n`), 1_000);
    let answer = "";
    socket.on("data", (data: Buffer) => (answer += data.toString()));
    const heldMs = await new Promise<number>((resolve) => {
      socket.on("close", () => resolve(Date.now() - started));
      socket.on("error", () => undefined);
      // Bounded: Node's own default would cut it at 60 to 90 s.
      setTimeout(() => resolve(Number.POSITIVE_INFINITY), 25_000);
    });
    clearInterval(timer);
    socket.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(heldMs).toBeGreaterThanOrEqual(9_000);
    expect(heldMs).toBeLessThan(13_000);
  }, 30_000);
});
