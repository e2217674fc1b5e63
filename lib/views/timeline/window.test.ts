import { describe, expect, it } from "vitest";
import { axisTicks, formatMoment, positionOf, tickLabel, WINDOW_MS } from "./window";

const at = (iso: string) => Date.parse(iso);

describe("the timeline's axis", () => {
  it("ticks on round UTC hours within a day", () => {
    const to = at("2026-11-29T14:25:00Z");
    const ticks = axisTicks("6h", to - WINDOW_MS["6h"], to);
    expect(ticks.map((tick) => tick.label)).toEqual(["09:00", "10:00", "11:00", "12:00", "13:00", "14:00"]);
    const day = axisTicks("24h", to - WINDOW_MS["24h"], to);
    expect(day.map((tick) => tick.label)).toEqual(["15:00", "18:00", "21:00", "Nov 29", "03:00", "06:00", "09:00", "12:00"]);
  });

  it("ticks on UTC midnights for days", () => {
    const to = at("2026-11-29T14:25:00Z");
    const week = axisTicks("7d", to - WINDOW_MS["7d"], to);
    expect(week.map((tick) => tick.label)).toEqual(["Nov 23", "Nov 24", "Nov 25", "Nov 26", "Nov 27", "Nov 28", "Nov 29"]);
    expect(new Date(week[0]!.at).toISOString()).toBe("2026-11-23T00:00:00.000Z");
    const month = axisTicks("30d", to - WINDOW_MS["30d"], to);
    expect(month.length).toBeGreaterThanOrEqual(5);
    expect(month.length).toBeLessThanOrEqual(7);
  });

  it("places times between the window's ends, clamped", () => {
    expect(positionOf(150, 100, 200)).toBe(0.5);
    expect(positionOf(50, 100, 200)).toBe(0);
    expect(positionOf(250, 100, 200)).toBe(1);
  });

  it("formats moments in UTC", () => {
    expect(formatMoment("2026-11-29T07:05:59.000Z")).toBe("Nov 29 07:05 UTC");
    expect(tickLabel(at("2026-12-01T00:00:00Z"), "24h")).toBe("Dec 1");
  });
});
