import { describe, expect, it } from "vitest";
import { commandText, joinArgv, parseTextArgv } from "./commands";
import { itTransforms } from "@/testing/text-cases";

describe("commandText", () => {
  itTransforms(commandText, [
    ["turns the text form of a Python argv list into a command line", [["['ruff', 'check', 'api/billing']", "ruff check api/billing"], ['["pytest", "-x"]', "pytest -x"], [" [ 'pytest' , '-k', \"a b\" ] ", "pytest -k 'a b'"]]],
    ["joins argv arrays, quoting arguments a shell would split", [[["npm", "run", "typecheck"], "npm run typecheck"], [["git", "commit", "-m", "fix it"], "git commit -m 'fix it'"], [["echo", "it's"], "echo 'it'\\''s'"], [["printf", ""], "printf ''"], [["ls", "$HOME", "a;b"], "ls '$HOME' 'a;b'"]]],
    ["keeps ordinary command text as it is", [["pytest api/billing -k rounding", "pytest api/billing -k rounding"], ["[ -f x ] && echo y", "[ -f x ] && echo y"], ["['unterminated', 'list'", "['unterminated', 'list'"]]],
  ]);
});

describe("parseTextArgv", () => {
  it("parses lists, mixed quotes and a trailing comma", () => {
    expect(parseTextArgv("['a', \"b c\", ]")).toEqual(["a", "b c"]);
    expect(parseTextArgv("[]")).toEqual([]);
  });

  it("refuses text that is not a list of quoted strings", () => {
    expect(parseTextArgv("[1, 2]")).toBeNull();
    expect(parseTextArgv("pytest")).toBeNull();
    expect(parseTextArgv("['a' 'b']")).toBeNull();
  });
});

describe("joinArgv", () => {
  it("leaves safe arguments bare", () => {
    expect(joinArgv(["a@b", "x=1", "path/to/file.ts", "--flag", "k:v,w", "50%"])).toBe("a@b x=1 path/to/file.ts --flag k:v,w 50%");
  });
});
