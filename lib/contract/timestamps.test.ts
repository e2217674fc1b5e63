import { describe, expect, it } from "vitest";
import { MAX_TIMESTAMP_MS, parseProducerTimestamp } from "./timestamps";

describe("parseProducerTimestamp", () => {
  it("reads epoch seconds as numbers and numeric strings", () => {
    expect(parseProducerTimestamp(1795856220.4412)).toBe(1795856220441);
    expect(parseProducerTimestamp(1795856220)).toBe(1795856220000);
    expect(parseProducerTimestamp(" 1795856220.5 ")).toBe(1795856220500);
    expect(parseProducerTimestamp(0)).toBe(0);
  });

  it("reads ISO-8601 with Z, with an offset, and without one as UTC", () => {
    expect(parseProducerTimestamp("2026-11-29T06:41:12Z")).toBe(Date.UTC(2026, 10, 29, 6, 41, 12));
    expect(parseProducerTimestamp("2026-11-29T05:02:00+01:00")).toBe(Date.UTC(2026, 10, 29, 4, 2));
    expect(parseProducerTimestamp("2026-11-29T05:02:00-0130")).toBe(Date.UTC(2026, 10, 29, 6, 32));
    expect(parseProducerTimestamp("2026-11-29T06:41:12")).toBe(Date.UTC(2026, 10, 29, 6, 41, 12));
    expect(parseProducerTimestamp("2026-11-29 06:41:12.250")).toBe(Date.UTC(2026, 10, 29, 6, 41, 12, 250));
    expect(parseProducerTimestamp("2026-11-29")).toBe(Date.UTC(2026, 10, 29));
  });

  it("returns null for what is not a time", () => {
    expect(parseProducerTimestamp("yesterday")).toBeNull();
    expect(parseProducerTimestamp(Number.NaN)).toBeNull();
    expect(parseProducerTimestamp(Number.POSITIVE_INFINITY)).toBeNull();
  });

  it("has a year-9999 ceiling", () => {
    expect(new Date(MAX_TIMESTAMP_MS).toISOString()).toBe("9999-12-31T23:59:59.000Z");
  });
});
