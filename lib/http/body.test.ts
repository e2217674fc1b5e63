import { describe, expect, it } from "vitest";
import { BatonError } from "../core/errors";
import { errorResponse } from "./respond";
import { readBodyText } from "./body";

/** Reading a body: a slow or stalled one ends with 408 instead of holding the request (decision 030). */

const encoder = new TextEncoder();

/** A body that sends `chunks` with `gapMs` between them, then (unless `end`) stalls for good. */
function slowBody(chunks: string[], gapMs: number, end = true): { request: Request; cancelled: () => boolean } {
  let sent = 0;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent < chunks.length) {
        if (sent > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
        controller.enqueue(encoder.encode(chunks[sent++]));
      } else if (end) {
        controller.close();
      } else {
        await new Promise(() => undefined);
      }
    },
    cancel() {
      cancelled = true;
    },
  });
  const request = new Request("http://baton.test/api/v1/session", { method: "POST", body, duplex: "half" } as RequestInit);
  return { request, cancelled: () => cancelled };
}

async function refusal(promise: Promise<unknown>): Promise<BatonError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(BatonError);
  return error as BatonError;
}

describe("readBodyText deadlines", () => {
  it("reads a body that arrives in time, in pieces", async () => {
    const { request } = slowBody(['{"a":', "1}"], 10);
    await expect(readBodyText(request, 1000, { totalMs: 1000, idleMs: 500 })).resolves.toEqual({ text: '{"a":1}', bytes: 7 });
  });

  it("stops a body that stalls with 408 request_timeout after the idle timeout, and cancels it", async () => {
    const { request, cancelled } = slowBody(['{"a":'], 0, false);
    const started = Date.now();
    const error = await refusal(readBodyText(request, 1000, { totalMs: 5000, idleMs: 80 }));
    expect(Date.now() - started).toBeLessThan(2000);
    expect(error.code).toBe("request_timeout");
    expect(error.status).toBe(408);
    expect(error.message).toContain("sent nothing for 80 ms");
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(cancelled()).toBe(true);
    const response = errorResponse(error);
    expect(response.status).toBe(408);
    expect(response.headers.get("connection")).toBe("close");
  });

  it("stops a body that keeps trickling past the total timeout, although no gap reaches the idle timeout", async () => {
    const { request } = slowBody(Array.from({ length: 40 }, () => " "), 30);
    const started = Date.now();
    const error = await refusal(readBodyText(request, 1000, { totalMs: 200, idleMs: 150 }));
    expect(Date.now() - started).toBeLessThan(2000);
    expect(error.code).toBe("request_timeout");
    expect(error.message).toContain("took longer than 200 ms");
  });

  it("takes its deadlines from BATON_BODY_TIMEOUT_MS and BATON_BODY_IDLE_TIMEOUT_MS by default", async () => {
    const { resetConfig } = await import("../server/config");
    const saved = process.env.BATON_BODY_IDLE_TIMEOUT_MS;
    process.env.BATON_BODY_IDLE_TIMEOUT_MS = "60";
    resetConfig();
    try {
      const error = await refusal(readBodyText(slowBody(["{"], 0, false).request, 1000));
      expect(error.message).toContain("sent nothing for 60 ms");
    } finally {
      if (saved === undefined) delete process.env.BATON_BODY_IDLE_TIMEOUT_MS;
      else process.env.BATON_BODY_IDLE_TIMEOUT_MS = saved;
      resetConfig();
    }
  });

  it("names the variable when a timeout setting is not valid", async () => {
    const { config, resetConfig } = await import("../server/config");
    const saved = process.env.BATON_BODY_TIMEOUT_MS;
    process.env.BATON_BODY_TIMEOUT_MS = "soon";
    resetConfig();
    try {
      expect(() => config()).toThrow(/BATON_BODY_TIMEOUT_MS/);
    } finally {
      if (saved === undefined) delete process.env.BATON_BODY_TIMEOUT_MS;
      else process.env.BATON_BODY_TIMEOUT_MS = saved;
      resetConfig();
    }
  });
});
