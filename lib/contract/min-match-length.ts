/**
 * The fewest UTF-16 units a match of a regular expression can take, read from its source: a
 * lower bound for the subset Baton's secret patterns use (literals, escapes, classes, groups,
 * alternation, lookarounds, quantifiers). Lookarounds, anchors, `\b` and backreferences count
 * as nothing; every other atom as one unit. Redaction skips a string shorter than a pattern's
 * bound without scanning it (lib/contract/secrets.ts).
 */
export function minMatchLength(source: string): number {
  let at = 0;

  const alternation = (): number => {
    let fewest = sequence();
    while (source[at] === "|") {
      at++;
      fewest = Math.min(fewest, sequence());
    }
    return fewest;
  };

  const sequence = (): number => {
    let total = 0;
    while (at < source.length && source[at] !== "|" && source[at] !== ")") total += quantified(atom());
    return total;
  };

  const group = (): number => {
    at++; // (
    let zeroWidth = false;
    if (source.startsWith("?:", at)) at += 2;
    else if (source.startsWith("?=", at) || source.startsWith("?!", at)) [at, zeroWidth] = [at + 2, true];
    else if (source.startsWith("?<=", at) || source.startsWith("?<!", at)) [at, zeroWidth] = [at + 3, true];
    else if (source.startsWith("?<", at)) at = source.indexOf(">", at) + 1; // a named group
    const inner = alternation();
    at++; // )
    return zeroWidth ? 0 : inner;
  };

  const atom = (): number => {
    const char = source[at];
    if (char === "(") return group();
    if (char === "[") {
      at++;
      if (source[at] === "^") at++;
      if (source[at] === "]") at++;
      while (at < source.length && source[at] !== "]") at += source[at] === "\\" ? 2 : 1;
      at++; // ]
      return 1;
    }
    if (char === "\\") {
      const escaped = source[at + 1] ?? "";
      at += 2;
      if (escaped === "u" || escaped === "x") at += escaped === "u" ? 4 : 2;
      // A word boundary is no character; a backreference may match nothing.
      return escaped === "b" || escaped === "B" || /[0-9]/.test(escaped) ? 0 : 1;
    }
    at++;
    return char === "^" || char === "$" ? 0 : 1;
  };

  const quantified = (length: number): number => {
    const char = source[at];
    const bounds = char === "{" ? /^\{(\d+)(?:,\d*)?\}/.exec(source.slice(at)) : null;
    let times = 1;
    if (char === "?" || char === "*") [at, times] = [at + 1, 0];
    else if (char === "+") at++;
    else if (bounds) [at, times] = [at + bounds[0].length, Number(bounds[1])];
    else return length;
    if (source[at] === "?") at++; // a lazy quantifier matches as few or more, never fewer
    return length * times;
  };

  return alternation();
}
