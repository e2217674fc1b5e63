import { describe, expect, it } from "vitest";
import { commandText, joinArgv, parseTextArgv } from "./commands";

describe("commandText", () => {
  it("turns the text form of a Python argv list into a command line", () => {
    expect(commandText("['ruff', 'check', 'api/billing']")).toBe("ruff check api/billing");
    expect(commandText('["pytest", "-x"]')).toBe("pytest -x");
    expect(commandText(" [ 'pytest' , '-k', \"a b\" ] ")).toBe("pytest -k 'a b'");
  });

  it("joins argv arrays, quoting arguments a shell would split", () => {
    expect(commandText(["npm", "run", "typecheck"])).toBe("npm run typecheck");
    expect(commandText(["git", "commit", "-m", "fix it"])).toBe("git commit -m 'fix it'");
    expect(commandText(["echo", "it's"])).toBe("echo 'it'\\''s'");
    expect(commandText(["printf", ""])).toBe("printf ''");
    expect(commandText(["ls", "$HOME", "a;b"])).toBe("ls '$HOME' 'a;b'");
  });

  it("keeps ordinary command text as it is", () => {
    expect(commandText("pytest api/billing -k rounding")).toBe("pytest api/billing -k rounding");
    expect(commandText("[ -f x ] && echo y")).toBe("[ -f x ] && echo y");
    expect(commandText("['unterminated', 'list'")).toBe("['unterminated', 'list'");
  });
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
