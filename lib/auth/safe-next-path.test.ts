import { describe, expect, it } from "vitest";
import { safeNextPath } from "./safe-next-path";

describe("safeNextPath", () => {
  it("keeps paths of this site, with their query and hash", () => {
    expect(safeNextPath("/")).toBe("/");
    expect(safeNextPath("/questions")).toBe("/questions");
    expect(safeNextPath("/threads/a%2Fb?to=pv_1#ledger")).toBe("/threads/a%2Fb?to=pv_1#ledger");
  });

  it("refuses anything that a browser would take to another site", () => {
    for (const next of [
      "//evil.example",
      "/\\evil.example",
      "/\t/evil.example",
      "/\n/evil.example",
      "/\r//evil.example",
      "https://evil.example/",
      "javascript:alert(1)",
      "evil.example",
      "/%09/evil.example/../..",
      "",
      null,
      42,
    ]) {
      const safe = safeNextPath(next);
      expect(new URL(safe, "https://baton.example").origin, String(next)).toBe("https://baton.example");
      expect(safe.startsWith("//"), String(next)).toBe(false);
    }
    expect(safeNextPath("/\t/evil.example")).toBe("/");
  });
});
