import { expect, it } from "vitest";

/**
 * One test per rule of a pure transform (normalising, escaping, quoting), the rule its name:
 * each case's input must come out as exactly its output. The tables read as the rules they check.
 */
export function itTransforms<Input>(transform: (input: Input) => unknown, rules: [rule: string, cases: [input: Input, output: unknown][]][]): void {
  it.each(rules)("%s", (_rule, cases) => {
    for (const [input, output] of cases) expect(transform(input), String(input)).toBe(output);
  });
}
