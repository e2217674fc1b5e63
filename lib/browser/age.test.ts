import { describe, expect, it } from "vitest";
import { formatRelative } from "./age";

const now = Date.parse("2026-11-29T12:00:00.000Z");

describe("formatRelative", () => {
  it("says how long ago, or how long until, in the fewest words", () => {
    expect(formatRelative("2026-11-29T11:59:30.000Z", now)).toBe("just now");
    expect(formatRelative("2026-11-29T11:55:00.000Z", now)).toBe("5 min ago");
    expect(formatRelative("2026-11-29T09:00:00.000Z", now)).toBe("3 h ago");
    expect(formatRelative("2026-11-25T12:00:00.000Z", now)).toBe("4 d ago");
    expect(formatRelative("2026-11-29T15:00:00.000Z", now)).toBe("in 3 h");
  });
});
