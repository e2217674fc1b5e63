import { describe, expect, it } from "vitest";
import { MAX_RECONNECT_DELAY_MS, reconnectDelay, streamUrl } from "./stream-client";

describe("reconnectDelay", () => {
  it("doubles from 1 s up to 30 s", () => {
    const middle = () => 0.5;
    expect([0, 1, 2, 3, 4, 5, 6, 10, 100].map((attempt) => reconnectDelay(attempt, middle))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 30_000,
    ]);
  });

  it("adds up to 20 % jitter either way", () => {
    expect(reconnectDelay(0, () => 0)).toBe(800);
    expect(reconnectDelay(0, () => 0.999999)).toBe(1_200);
    expect(reconnectDelay(50, () => 0.999999)).toBeLessThanOrEqual(MAX_RECONNECT_DELAY_MS * 1.2);
    for (let i = 0; i < 100; i++) {
      const delay = reconnectDelay(2);
      expect(delay).toBeGreaterThanOrEqual(3_200);
      expect(delay).toBeLessThanOrEqual(4_800);
    }
  });
});

describe("streamUrl", () => {
  it("adds or replaces after=<seq>, keeping relative URLs relative", () => {
    expect(streamUrl("/api/v1/stream", null)).toBe("/api/v1/stream");
    expect(streamUrl("/api/v1/stream", 42)).toBe("/api/v1/stream?after=42");
    expect(streamUrl("/api/v1/stream?after=3&x=1", 42)).toBe("/api/v1/stream?after=42&x=1");
    expect(streamUrl("https://baton.example/api/v1/stream", 0)).toBe("https://baton.example/api/v1/stream?after=0");
  });
});
