import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { minMatchLength } from "./min-match-length";
import { SECRET_PATTERNS } from "./secret-patterns";

describe("minMatchLength", () => {
  it.each([
    ["abc", 3],
    ["a|bc", 1],
    ["(?:ab|c)d", 2],
    ["a{3}b{2,}c{1,4}", 6],
    ["a?b*c+", 1],
    ["a{0,24}?b", 1],
    ["a{1,3}?b+?c??d{2}?", 4],
    ["(?<![A-Za-z])x(?!y)", 1],
    ["(?<=q)\\bx\\.y", 3],
    ["[\\]a]{2}", 2],
    ["\\r?\\n", 1],
    ["^(a)\\1$", 1],
    ["(?<name>ab)c", 3],
    ["\\u0041\\x42", 2],
  ])("%s takes at least %i", (source, fewest) => {
    expect(minMatchLength(source)).toBe(fewest);
  });

  it("is a lower bound of every match of the secret patterns in random text", () => {
    const text = fc.string({ unit: fc.constantFrom(..."aA0Z9_-.=:/@+~Q \\n'\"skghpxobtnKEY"), maxLength: 200 });
    fc.assert(
      fc.property(text, (value) => {
        for (const pattern of SECRET_PATTERNS) {
          for (const match of value.matchAll(new RegExp(pattern.regex.source, pattern.regex.flags))) {
            expect(match[0].length, pattern.kind).toBeGreaterThanOrEqual(pattern.minLength ?? 0);
          }
        }
      }),
      { seed: 20_261_204, numRuns: 500 },
    );
  });
});
