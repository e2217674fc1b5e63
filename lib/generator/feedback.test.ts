import { describe, expect, it } from "vitest";
import { boundCommand, COMMAND_MAX_CHARS, FAILING_MAX_RECORDS, isTestCommand, TAIL_CHARS, trimFeedback } from "./feedback";
import { parseFeedbackLog } from "./read";
import { jsonl } from "@/testing/generator/workbench";

const log = (records: (object | string)[]) => parseFeedbackLog(jsonl(records));
const run = (command: string, exit_code: number | null, extra: object = {}) => ({ command, exit_code, ...extra });

describe("trimFeedback", () => {
  it("keeps the last K records plus every failing one, in log order", () => {
    const records = [run("a", 1), run("b", 0), run("c", null), run("d", 0), run("e", 0), run("f", 0)];
    const { tail } = trimFeedback(log(records), 2);
    expect(tail.map((record) => [record.line, record.command, record.exit_code])).toEqual([
      [1, "a", 1],
      [3, "c", null],
      [5, "e", 0],
      [6, "f", 0],
    ]);
  });

  it("counts a record without an exit code as failing (its outcome is unknown)", () => {
    const { tail } = trimFeedback(log([{ command: "npm run build" }, run("ok", 0)]), 0);
    expect(tail).toEqual([{ line: 1, command: "npm run build", exit_code: null }]);
  });

  it("keeps more output for failing runs than for passing ones, cutting at the start", () => {
    const output = `${"x".repeat(5000)}END`;
    const { tail } = trimFeedback(log([run("fails", 1, { stdout_tail: output, stderr_tail: output }), run("passes", 0, { stdout_tail: output, stderr_tail: output })]), 5);
    const [failing, passing] = tail;
    const cut = (kept: number) => `[… ${output.length - kept} chars cut]${output.slice(-kept)}`;
    expect(failing!.stderr_tail).toBe(cut(TAIL_CHARS.failing.stderr));
    expect(failing!.stdout_tail).toBe(cut(TAIL_CHARS.failing.stdout));
    expect(passing!.stderr_tail).toBe(cut(TAIL_CHARS.passing.stderr));
    expect(passing).not.toHaveProperty("stdout_tail");
    expect(failing!.stderr_tail!.endsWith("END")).toBe(true);
  });

  it("never cuts a character in half", () => {
    const emoji = "😀".repeat(TAIL_CHARS.passing.stderr);
    // 801 code units; the last 400 start on the second half of an emoji, which is dropped.
    const { tail } = trimFeedback(log([run("passes", 0, { stderr_tail: `${emoji}b` })]), 1);
    const kept = tail[0]!.stderr_tail!.replace(/^\[… \d+ chars cut\]/, "");
    expect(kept).toBe(`${"😀".repeat(TAIL_CHARS.passing.stderr / 2 - 1)}b`);
    expect(Buffer.from(tail[0]!.stderr_tail!, "utf8").toString("utf8")).toBe(tail[0]!.stderr_tail);
  });

  it("bounds the number of failing records, keeping the most recent, and says how many it left out", () => {
    const records = Array.from({ length: FAILING_MAX_RECORDS + 7 }, (_, index) => run(`try ${index}`, 1));
    const trimmed = trimFeedback(log(records), 0);
    expect(trimmed.failingOmitted).toBe(7);
    expect(trimmed.tail).toHaveLength(FAILING_MAX_RECORDS);
    expect(trimmed.tail[0]!.command).toBe("try 7");
  });

  it("keeps argv as argv and bounds both forms", () => {
    expect(boundCommand(["pytest", "-x"])).toEqual(["pytest", "-x"]);
    const long = "y".repeat(COMMAND_MAX_CHARS + 10);
    expect(boundCommand(long)).toBe(`${"y".repeat(COMMAND_MAX_CHARS)}[… 10 chars cut]`);
    const many = Array.from({ length: 70 }, (_, index) => `f${index}`);
    expect(boundCommand(many)).toEqual([...many.slice(0, 64), "[6 more arguments cut]"]);
  });
});

describe("parseFeedbackLog", () => {
  it("reports malformed lines by number, skips blank ones, and keeps the rest", () => {
    const parsed = parseFeedbackLog(`${JSON.stringify(run("a", 0))}\n\n{not json\n${JSON.stringify({ command: 3 })}\r\n${JSON.stringify(run("b", 1))}\n`);
    expect(parsed.records.map((entry) => [entry.line, entry.record.command])).toEqual([
      [1, "a"],
      [5, "b"],
    ]);
    expect(parsed.malformed.map((entry) => entry.line)).toEqual([3, 4]);
    expect(parsed.malformed[0]!.problem).toMatch(/^not valid JSON \(.*\(column 2\)\)$/);
    expect(parsed.malformed[1]!.problem).toBe("command: expected the command as a non-empty string or argv array of strings");
  });
});

describe("isTestCommand", () => {
  it.each([
    ["npm test", true],
    ["npm run test:unit", true],
    ["pytest api/billing -k rounding", true],
    ["['pytest', '-x']", true],
    ["go test ./...", true],
    ["cargo test", true],
    ["python -m unittest", true],
    ["./node_modules/.bin/vitest run", true],
    ["npx playwright test", true],
    ["git add test/foo.ts", false],
    ["npm run build", false],
    ["test -f x", false],
  ])("%s -> %s", (command, expected) => {
    expect(isTestCommand(command)).toBe(expected);
  });

  it("reads argv arrays", () => {
    expect(isTestCommand(["npm", "test", "--", "--reporter=dot"])).toBe(true);
  });
});
