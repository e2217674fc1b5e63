import { afterEach, describe, expect, it, vi } from "vitest";
import { pushPacketText, type PushRetry } from "./push";

/** `baton push` after a 429 (decision 021): waits the Retry-After it was given and sends again, a few times at most. */

const target = { url: "http://baton.test", token: "btn_aaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" };
const stored = () =>
  new Response(JSON.stringify({ packet_id: "pv_1", thread_key: "t", duplicate: false, flags: [] }), { status: 201 });
const limited = (retryAfter: string) =>
  new Response(JSON.stringify({ error: { code: "rate_limited", message: "over the limit", details: null } }), {
    status: 429,
    headers: { "retry-after": retryAfter },
  });

function retryWith(overrides: Partial<PushRetry> = {}) {
  const waits: number[] = [];
  const retry: PushRetry = { retries: 5, maxWaitSeconds: 60, sleep: async (ms) => void waits.push(ms), ...overrides };
  return { retry, waits };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("pushPacketText after a 429 or a 503", () => {
  it("waits the Retry-After and sends again", async () => {
    const fetch = vi.fn().mockResolvedValueOnce(limited("2")).mockResolvedValueOnce(limited("1")).mockResolvedValueOnce(stored());
    vi.stubGlobal("fetch", fetch);
    const { retry, waits } = retryWith();
    const outcome = await pushPacketText(target, "{}", retry);
    expect(outcome).toMatchObject({ ok: true, status: 201, packetId: "pv_1" });
    expect(waits).toEqual([2000, 1000]);
    expect(fetch).toHaveBeenCalledTimes(3);
  });

  it("gives up after its retries, or at once when told to wait longer than it would", async () => {
    vi.stubGlobal("fetch", vi.fn().mockImplementation(async () => limited("1")));
    const few = retryWith({ retries: 2 });
    expect(await pushPacketText(target, "{}", few.retry)).toEqual({ ok: false, status: 429, message: "over the limit" });
    expect(few.waits).toEqual([1000, 1000]);

    vi.stubGlobal("fetch", vi.fn().mockImplementation(async () => limited("3600")));
    const long = retryWith();
    expect(await pushPacketText(target, "{}", long.retry)).toMatchObject({ ok: false, status: 429 });
    expect(long.waits).toEqual([]);
  });

  it("waits out a 503 (busy or overloaded) the same way", async () => {
    const unavailable = new Response(JSON.stringify({ error: { code: "unavailable", message: "busy", details: null } }), {
      status: 503,
      headers: { "retry-after": "1" },
    });
    const fetch = vi.fn().mockResolvedValueOnce(unavailable).mockResolvedValueOnce(stored());
    vi.stubGlobal("fetch", fetch);
    const { retry, waits } = retryWith();
    expect(await pushPacketText(target, "{}", retry)).toMatchObject({ ok: true, status: 201 });
    expect(waits).toEqual([1000]);
  });
});
