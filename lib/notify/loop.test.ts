import { describe, expect, it, vi } from "vitest";
import { announceLedger } from "../events/bus";
import { startPollingLoop } from "./loop";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error("condition not reached");
    await pause(2);
  }
}

describe("startPollingLoop", () => {
  it("logs a failing step and keeps going; stop waits for the step in flight", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    let calls = 0;
    let finished = 0;
    const loop = startPollingLoop({
      name: "test loop",
      intervalMs: 5,
      step: async () => {
        calls++;
        if (calls === 1) throw new Error("boom");
        await pause(30);
        finished++;
        return false;
      },
    });
    await until(() => calls >= 2);
    await loop.stop();
    // The second step had begun; stop() returned only after it finished, and nothing ran after.
    expect(finished).toBe(calls - 1);
    const after = calls;
    await pause(30);
    expect(calls).toBe(after);
    expect(errors).toHaveBeenCalledWith(expect.stringMatching(/^baton: test loop failed; trying again in 5 ms: boom$/));
    errors.mockRestore();
  });

  it("runs again at once when there is more, or when woken (by the ledger too) during a step", async () => {
    let calls = 0;
    const loop = startPollingLoop({
      name: "test loop",
      intervalMs: 60_000,
      wakeOnLedger: true,
      step: async () => {
        calls++;
        return calls < 3;
      },
    });
    await until(() => calls >= 3);
    await pause(20);
    expect(calls).toBe(3);
    announceLedger();
    await until(() => calls >= 4);
    loop.wake();
    await until(() => calls >= 5);
    await pause(20);
    expect(calls).toBe(5);
    await loop.stop();
    announceLedger();
    await pause(20);
    expect(calls).toBe(5);
  });

  it("lets a burst of wakes share one step, which starts a gap after the last step started", async () => {
    let calls = 0;
    const loop = startPollingLoop({
      name: "test loop",
      intervalMs: 60_000,
      wakeOnLedger: true,
      wakeGapMs: 400,
      step: async () => {
        calls++;
        return false;
      },
    });
    await until(() => calls === 1);
    const afterFirst = performance.now();
    for (let i = 0; i < 10; i++) {
      announceLedger();
      loop.wake();
    }
    await until(() => calls === 2);
    // The first step started before afterFirst; the second not before its gap ended.
    expect(performance.now() - afterFirst).toBeGreaterThanOrEqual(350);
    await pause(30);
    expect(calls).toBe(2);
    await loop.stop();
  });
});
