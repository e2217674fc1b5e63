import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { REFRESH_EVERY_MS, RefreshScheduler } from "./refresh-scheduler";

describe("RefreshScheduler", () => {
  beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => vi.useRealTimers());

  it("runs a burst once at once, then at most once per gap, always following the last call", () => {
    const refresh = vi.fn();
    const scheduler = new RefreshScheduler(refresh);
    for (let i = 0; i < 5; i += 1) scheduler.schedule();
    vi.advanceTimersByTime(0);
    expect(refresh).toHaveBeenCalledTimes(1);
    scheduler.schedule();
    scheduler.schedule();
    vi.advanceTimersByTime(REFRESH_EVERY_MS - 1);
    expect(refresh).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1);
    expect(refresh).toHaveBeenCalledTimes(2);
    vi.advanceTimersByTime(10 * REFRESH_EVERY_MS);
    expect(refresh).toHaveBeenCalledTimes(2);
  });

  it("brings a later run forward when a shorter gap is asked for, and keeps an earlier one", () => {
    const refresh = vi.fn();
    const scheduler = new RefreshScheduler(refresh);
    scheduler.schedule(0);
    vi.advanceTimersByTime(0);
    scheduler.schedule(30_000);
    scheduler.schedule(2_000);
    vi.advanceTimersByTime(2_000);
    expect(refresh).toHaveBeenCalledTimes(2);
    scheduler.schedule(2_000);
    scheduler.schedule(30_000);
    vi.advanceTimersByTime(2_000);
    expect(refresh).toHaveBeenCalledTimes(3);
    vi.advanceTimersByTime(60_000);
    expect(refresh).toHaveBeenCalledTimes(3);
  });

  it("runs nothing once cancelled", () => {
    const refresh = vi.fn();
    const scheduler = new RefreshScheduler(refresh);
    scheduler.schedule(1_000);
    scheduler.cancel();
    vi.advanceTimersByTime(5_000);
    expect(refresh).not.toHaveBeenCalled();
  });
});
