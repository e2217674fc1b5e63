import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { fetchParsed } from "./fetch-parsed";

const schema = z.object({ n: z.number() });

afterEach(() => vi.unstubAllGlobals());

describe("fetchParsed with the answer it holds", () => {
  it("sends the ETag of what it holds, keeps it on 304, and takes a new answer otherwise", async () => {
    const calls: RequestInit[] = [];
    const answers = [
      new Response(JSON.stringify({ n: 1 }), { status: 200, headers: { etag: 'W/"one"' } }),
      new Response(null, { status: 304, headers: { etag: 'W/"one"' } }),
      new Response(JSON.stringify({ n: 2 }), { status: 200, headers: { etag: 'W/"two"' } }),
    ];
    vi.stubGlobal("fetch", (_url: string, init: RequestInit) => {
      calls.push(init);
      return Promise.resolve(answers.shift()!);
    });
    const first = await fetchParsed("/api/v1/board", schema, "the board");
    const same = await fetchParsed("/api/v1/board", schema, "the board", first);
    const next = await fetchParsed("/api/v1/board", schema, "the board", same);
    expect(same).toBe(first);
    expect(next).toEqual({ n: 2 });
    expect(calls.map((init) => (init.headers as Record<string, string>)["if-none-match"])).toEqual([undefined, 'W/"one"', 'W/"one"']);
    expect(calls.every((init) => init.cache === "no-store")).toBe(true);
  });

  it("data it did not fetch (the server's render) is fetched whole", async () => {
    const calls: RequestInit[] = [];
    vi.stubGlobal("fetch", (_url: string, init: RequestInit) => {
      calls.push(init);
      return Promise.resolve(new Response(JSON.stringify({ n: 3 }), { status: 200 }));
    });
    expect(await fetchParsed("/api/v1/board", schema, "the board", { n: 0 })).toEqual({ n: 3 });
    expect((calls[0]!.headers as Record<string, string>)["if-none-match"]).toBeUndefined();
  });
});
