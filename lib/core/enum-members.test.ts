import { describe, expect, it } from "vitest";
import { BatonError } from "./errors";
import { enumMembers } from "./enum-members";

describe("enumMembers", () => {
  it("lists the record's keys in the order written", () => {
    expect(enumMembers({ running: "Running", needs_you: "Needs you", stale: "Stale" })).toEqual(["running", "needs_you", "stale"]);
  });

  it("refuses a key that reads as an array index, and an empty record", () => {
    expect(() => enumMembers({ b: 1, "2": 2 })).toThrow(BatonError);
    expect(() => enumMembers({ b: 1, "2": 2 })).toThrow(/"2" reads as an array index/);
    expect(() => enumMembers({})).toThrow(/at least one member/);
  });

  it("keeps keys that only look like numbers, which JavaScript does not reorder", () => {
    expect(enumMembers({ b: 1, "02": 2, "1.5": 3 })).toEqual(["b", "02", "1.5"]);
  });
});
