import { readFile, stat } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { POST as postPackets } from "../../app/api/v1/packets/route";
import { ALLOW_LIST_HINT } from "./allow-list";
import { main } from "../../cli/main";
import { createApiToken } from "../auth/tokens";
import { pushPacketFile } from "../../cli/sync/push";
import { database } from "../db/client";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { SCENARIOS } from "@/testing/generator/scenarios";
import type { TestWorkbench } from "@/testing/generator/workbench";

// The real client, watched: `generate --push` must send through it, not through a copy.
vi.mock("../../cli/sync/push", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../cli/sync/push")>();
  return { ...actual, pushPacketFile: vi.fn(actual.pushPacketFile) };
});

freshDatabaseForThisFile();

let log: MockInstance<typeof console.log>;
let error: MockInstance<typeof console.error>;
const lines = (spy: MockInstance<(...args: never[]) => unknown>) => spy.mock.calls.map((call) => call.map(String).join(" "));
const benches: TestWorkbench[] = [];
const saved = { url: process.env.BATON_URL, token: process.env.BATON_TOKEN };

beforeEach(() => {
  log = vi.spyOn(console, "log").mockImplementation(() => undefined);
  error = vi.spyOn(console, "error").mockImplementation(() => undefined);
});
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(benches.splice(0).map((bench) => bench.remove()));
  for (const [name, value] of [["BATON_URL", saved.url], ["BATON_TOKEN", saved.token]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

async function scenario(name: string): Promise<TestWorkbench> {
  const bench = await SCENARIOS.find((item) => item.name === name)!.build();
  benches.push(bench);
  return bench;
}

describe("baton check", () => {
  it("exits 0 on a clean workbench and prints the clean_state.json path", async () => {
    const bench = await scenario("clean-pass");
    expect(await main(["check", "--root", bench.root])).toBe(0);
    expect(lines(log)).toEqual([path.join(bench.root, "outputs/clean_state.json")]);
    expect(lines(error)).toEqual(["baton check: clean"]);
  });

  it("exits 1 and lists the blocking problems on stderr", async () => {
    const bench = await scenario("dirty-allowed");
    expect(await main(["check", "--root", bench.root, "--branch", "main"])).toBe(1);
    const printed = lines(error);
    expect(printed[0]).toBe(`baton check: 9 blocking problems (also in ${path.join(bench.root, "outputs/clean_state.json")}):`);
    expect(printed).toContain("  working_tree: src/invoice.ts modified and not committed");
    expect(printed).toContain("  last_test_run: failing: last test run `pytest -x tests/` (feedback_record.jsonl line 2) exited 1");
    expect(printed).toContain(`baton check: ${ALLOW_LIST_HINT}`);
  });

  it("exits 2 for a root that is not a folder, creating nothing", async () => {
    const bench = await scenario("clean-pass");
    const missing = path.join(bench.root, "no-such-folder");
    expect(await main(["check", "--root", missing])).toBe(2);
    expect(lines(error)).toEqual([`baton check: The workspace root ${missing} is not a folder; point --root at the folder holding outputs/.`]);
    await expect(stat(missing)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("exits 2 naming a malformed file", async () => {
    const bench = await scenario("clean-pass");
    await bench.write("feature_list.json", "{ nope");
    expect(await main(["check", "--root", bench.root])).toBe(2);
    expect(lines(error)[0]).toMatch(/^baton check: feature_list\.json is not valid JSON: /);
    expect(lines(log)).toEqual([]);
  });
});

describe("baton generate", () => {
  it("refuses a dirty workbench with exit 1, then writes the packet with --allow-dirty", async () => {
    const bench = await scenario("dirty-allowed");
    expect(await main(["generate", "--root", bench.root])).toBe(1);
    expect(lines(error).at(-1)).toBe("baton generate: no packet written; fix the problems, or pass --allow-dirty to hand off with them recorded");
    await expect(stat(path.join(bench.root, "outputs/handoff"))).rejects.toMatchObject({ code: "ENOENT" });
    log.mockClear();

    expect(await main(["generate", "--root", bench.root, "--allow-dirty"])).toBe(0);
    const [cleanState, json, markdown] = lines(log);
    expect(cleanState).toBe(path.join(bench.root, "outputs/clean_state.json"));
    expect(json).toMatch(new RegExp(`^${bench.root}/outputs/handoff/sess-20261120T090000Z-[0-9a-f]{10}/handoff\\.json$`));
    expect(markdown).toBe(json!.replace(/json$/, "md"));
    expect(JSON.parse(await readFile(json!, "utf8"))).toMatchObject({ task_id: "T-052", status: "active" });
  });

  it("exits 2 on an invalid option, naming it", async () => {
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    expect(await main(["generate", "--k", "many"])).toBe(2);
    expect(stderr.mock.calls.map((call) => String(call[0])).join("")).toContain("option '--k <count>' argument 'many' is invalid");
  });

  it("documents its options and exit codes in --help", async () => {
    const stdout = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    expect(await main(["generate", "--help"])).toBe(0);
    const help = stdout.mock.calls.map((call) => String(call[0])).join("");
    for (const option of ["--root <dir>", "--task <id>", "--session-id <id>", "--k <count>", "--push", "--allow-dirty"]) expect(help).toContain(option);
    expect(help).toContain("3  packet written, but --push failed");
  });

  describe("--push", () => {
    // The real POST /api/v1/packets route behind a plain HTTP server, recording what arrives.
    let server: Server;
    let url: string;
    const received: { headers: IncomingHttpHeaders; body: string }[] = [];

    beforeAll(async () => {
      server = createServer((incoming, outgoing) => {
        let body = "";
        incoming.setEncoding("utf8");
        incoming.on("data", (chunk: string) => (body += chunk));
        incoming.on("end", () => {
          void (async () => {
            received.push({ headers: incoming.headers, body });
            const headers: [string, string][] = Object.entries(incoming.headers).map(([name, value]) => [name, String(value)]);
            const request = new Request(`${url}${incoming.url}`, { method: "POST", headers, body });
            const response = await postPackets(request, { params: Promise.resolve({}) });
            outgoing.writeHead(response.status, Object.fromEntries(response.headers));
            outgoing.end(Buffer.from(await response.arrayBuffer()));
          })();
        });
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    it("sends the written file through the client `baton push` uses, and Baton stores it", async () => {
      const bench = await scenario("failing-verification");
      process.env.BATON_URL = url;
      process.env.BATON_TOKEN = (await createApiToken("generator", ["packets:write"])).token;
      received.length = 0;
      vi.mocked(pushPacketFile).mockClear();
      expect(await main(["generate", "--root", bench.root, "--push"])).toBe(0);

      const file = lines(log)[1]!;
      expect(vi.mocked(pushPacketFile).mock.calls).toEqual([[{ url, token: process.env.BATON_TOKEN }, file]]);
      expect(received).toHaveLength(1);
      // The packet travels with the report its verdict pointer names, read from the workspace (decision 051).
      const sent = JSON.parse(received[0]!.body) as { packet: unknown; reports: { ref: string; report: { passed?: boolean; verdict?: string } }[] };
      expect(sent.packet).toEqual(JSON.parse(await readFile(file, "utf8")));
      expect(sent.reports.map((report) => [report.ref, report.report.passed ?? report.report.verdict])).toEqual([
        ["outputs/verification/T-014.json", false],
        ["outputs/review/T-014.json", "pass"],
      ]);
      expect(received[0]!.headers).toMatchObject({ "baton-source": "cli", "content-type": "application/json", authorization: `Bearer ${process.env.BATON_TOKEN}` });
      const pushed = lines(error).find((line) => line.startsWith("baton generate: pushed: "));
      expect(pushed).toMatch(/^baton generate: pushed: stored pv_\S+ thread=acme\/billing@main#T-014 flags=verdict_failed flags_at=\S+ reports=2$/);
      const version = await (await database()).packetVersion.findFirstOrThrow({ where: { id: pushed!.split(" ")[4]! } });
      expect(version.source).toBe("cli");

      // The same bytes again are the same version: a rerun at the end of a session adds nothing.
      log.mockClear();
      error.mockClear();
      expect(await main(["generate", "--root", bench.root, "--push"])).toBe(0);
      expect(lines(error).find((line) => line.startsWith("baton generate: pushed: "))).toMatch(/^baton generate: pushed: duplicate /);
    });

    it("exits 3 when the push fails, with the packet still on disk", async () => {
      const bench = await scenario("clean-pass");
      process.env.BATON_URL = url;
      delete process.env.BATON_TOKEN;
      expect(await main(["generate", "--root", bench.root, "--push"])).toBe(3);
      expect(lines(error).at(-1)).toMatch(/^baton generate: push failed: Set BATON_TOKEN .*; the packet is on disk$/);
      expect((await stat(lines(log)[1]!)).isFile()).toBe(true);
    });
  });
});
