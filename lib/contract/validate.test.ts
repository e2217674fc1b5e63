import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { BatonError } from "../core/errors";
import { packetContentHash } from "./canonical-json";
import { preparePacket } from "./prepare";
import { JSON_MAX_DEPTH, PACKET_LIST_LIMITS } from "./schema";
import { assertJsonDepth, parseJsonText, validatePacket, type FieldProblem } from "./validate";

const INVALID_DIR = fileURLToPath(new URL("../../testing/fixtures/examples/invalid/", import.meta.url));
const RECEIVED_AT = Date.UTC(2026, 10, 29, 8, 0, 0);

/** Parses and prepares a body the way ingest does; returns the BatonError it throws. */
function refusal(text: string): BatonError {
  try {
    preparePacket(parseJsonText(text), RECEIVED_AT);
  } catch (error) {
    expect(error).toBeInstanceOf(BatonError);
    return error as BatonError;
  }
  throw new Error(`expected ${text.slice(0, 80)} to be refused`);
}
function refusalOf(value: unknown): BatonError {
  return refusal(JSON.stringify(value));
}
const fieldsOf = (error: BatonError) => (error.details as { fields: FieldProblem[] }).fields;

const nested = (levels: number) => "[".repeat(levels) + "]".repeat(levels);

describe("invalid example packets", () => {
  const expected: Record<string, string> = {
    "array.json": "not_a_packet",
    "no-core-fields.json": "no_core_fields",
    "truncated.json": "invalid_json",
    "wrong-types.json": "invalid_fields",
  };

  it("are the four known fixtures", () => {
    expect(readdirSync(INVALID_DIR).sort()).toEqual(Object.keys(expected).sort());
  });

  it.each(Object.entries(expected))("%s is refused with %s", (file, code) => {
    const error = refusal(readFileSync(`${INVALID_DIR}${file}`, "utf8"));
    expect(["invalid_json", "not_a_packet", "no_core_fields", "invalid_fields"]).toContain(error.code);
    expect(error.code).toBe(code);
    expect(error.status).toBe(400);
  });

  it("wrong-types.json names each offending field, what it got and the shapes it accepts", () => {
    const error = refusal(readFileSync(`${INVALID_DIR}wrong-types.json`, "utf8"));
    const fields = fieldsOf(error);
    expect([...fields].sort((a, b) => a.field.localeCompare(b.field))).toEqual([
      {
        field: "next_action",
        problem: "got an array",
        accepts: "a string, or an object {action|description, command?, owner?}",
      },
      {
        field: "open_risks",
        problem: "got a string",
        accepts: "an array of strings or of objects {severity?, detail|description|risk|text, id?, mitigation?}",
      },
      { field: "summary", problem: "got a number", accepts: "a string" },
    ]);
    for (const field of ["summary", "next_action", "open_risks"]) expect(error.message).toContain(field);
    expect(error.message).toMatch(/^Not stored: /);
    expect(error.message).toContain("accepts a string, or an object {action|description");
  });

  it("no-core-fields.json lists the seven core fields", () => {
    const error = refusal(readFileSync(`${INVALID_DIR}no-core-fields.json`, "utf8"));
    expect(error.details).toEqual({
      core_fields: ["summary", "changed_files", "commands_run", "failed_attempts", "open_risks", "next_action", "verdict_pointer"],
    });
  });
});

describe("what cannot be a packet", () => {
  it.each([
    ["null", "null"],
    ["42", "a number"],
    ['"summary"', "a string"],
    ["true", "a boolean"],
    ["[]", "an array"],
  ])("%s is not_a_packet", (text, described) => {
    const error = refusal(text);
    expect(error.code).toBe("not_a_packet");
    expect(error.message).toContain(`got ${described}`);
  });

  it.each([[""], ["{"], ["{'summary': 'x'}"], ['{"summary": "x",}'], ["NaN"]])("%j is invalid_json", (text) => {
    expect(refusal(text).code).toBe("invalid_json");
  });

  it("an object with none of the core fields is no_core_fields, even with metadata", () => {
    expect(refusalOf({ task_id: "T-1", branch: "main", agent: "a", human: { revision: 1 } }).code).toBe("no_core_fields");
    expect(refusalOf({}).code).toBe("no_core_fields");
  });

  it("an object whose only core fields are null is no_core_fields (null counts as absent)", () => {
    expect(refusalOf({ summary: null, next_action: null, task_id: "T-1" }).code).toBe("no_core_fields");
  });

  it("one non-null core field is enough", () => {
    const prepared = preparePacket({ summary: null, next_action: "do it" }, RECEIVED_AT);
    expect(prepared.canonical.next_action).toEqual({ text: "do it" });
  });
});

describe("field-level errors", () => {
  it.each([
    [{ summary: 42 }, "summary", "got a number", "a string"],
    [{ summary: "s", changed_files: "a.ts" }, "changed_files", "got a string", "an array of strings or of objects {path, change?, additions?, deletions?}"],
    [{ summary: "s", verdict_pointer: 5 }, "verdict_pointer", "got a number", "a string (path or URL), an object {verdict|verification?, review?}, or an array of those"],
    [{ summary: "s", schema_version: 2 }, "schema_version", "got a number", '1, "1" or "baton.handoff/v1"'],
    [{ summary: "s", agent: { kind: "bot" } }, "agent", "got an object", "a string, or an object {name, kind?, model?}"],
    [{ summary: "s", branch: ["main"] }, "branch", "got an array", "a string"],
    [{ summary: "s", created_at: "yesterday" }, "created_at", "got a string", "an ISO-8601 string, or epoch seconds as a number or numeric string"],
    [{ summary: "s", created_at: true }, "created_at", "got a boolean", "an ISO-8601 string, or epoch seconds as a number or numeric string"],
    [{ summary: "s", timestamp: -5 }, "timestamp", "got a number", "an ISO-8601 string, or epoch seconds as a number or numeric string"],
    [{ summary: "s", verdict: { passed: "yes" } }, "verdict", "got an object", "an object {passed?: boolean, review_total?: number, review_verdict?: string}"],
    [{ summary: "s", clean_state: "dirty" }, "clean_state", "got a string", "an array of strings or of objects {check, detail}, or an object {blocking: [...]}"],
  ])("%j is refused naming %s", (value, field, problem, accepts) => {
    const error = refusalOf(value);
    expect(error.code).toBe("invalid_fields");
    expect(fieldsOf(error)).toEqual([{ field, problem, accepts }]);
  });

  it("names the offending item of an array field", () => {
    const error = refusalOf({
      open_risks: ["fine", { severity: "high" }],
      commands_run: ["ok", 42],
      questions_for_human: [{ id: "q1" }],
    });
    const fields = fieldsOf(error);
    expect(fields.map((f) => [f.field, f.problem])).toEqual(
      expect.arrayContaining([
        ["open_risks[1]", "got an item that is an object"],
        ["commands_run[1]", "got an item that is a number"],
        ["questions_for_human[0]", "got an item that is an object"],
      ]),
    );
    expect(fields).toHaveLength(3);
    expect(fields.find((f) => f.field === "commands_run[1]")?.accepts).toContain("argv array of strings");
  });

  it("stores nothing: refuses the whole packet even when the other fields are fine", () => {
    const error = refusalOf({ summary: "s", next_action: "go", changed_files: [{ additions: 3 }] });
    expect(error.code).toBe("invalid_fields");
    expect(fieldsOf(error).map((f) => f.field)).toEqual(["changed_files[0]"]);
  });

  it("keeps unknown fields of any type", () => {
    const value = { summary: "s", x_any: [1, { nested: true }], extra: "is not reserved" };
    expect(validatePacket(value)).toMatchObject({ summary: "s", x_any: [1, { nested: true }] });
    expect(preparePacket(value, RECEIVED_AT).canonical.extra).toEqual({ x_any: [1, { nested: true }], extra: "is not reserved" });
  });
});

describe("JSON depth limit", () => {
  it("is 64", () => {
    expect(JSON_MAX_DEPTH).toBe(64);
  });

  it("accepts exactly 64 levels", () => {
    expect(parseJsonText(nested(64))).toHaveLength(1);
    // A packet whose deepest value sits at level 64 (the packet object is level 1).
    const packet = `{"summary":"s","x_deep":${nested(63)}}`;
    expect(preparePacket(parseJsonText(packet), RECEIVED_AT).canonical.extra).toHaveProperty("x_deep");
  });

  it("refuses 65 levels with json_too_deep", () => {
    const error = refusal(`{"summary":"s","x_deep":${nested(64)}}`);
    expect(error.code).toBe("json_too_deep");
    expect(error.status).toBe(400);
    expect(error.details).toEqual({ max_depth: 64 });
    expect(refusal(nested(65)).code).toBe("json_too_deep");
  });

  it("refuses 100,000 levels without overflowing the stack", () => {
    expect(refusal(nested(100_000)).code).toBe("json_too_deep");
    expect(refusal('{"a":'.repeat(100_000) + "1" + "}".repeat(100_000)).code).toBe("json_too_deep");
    // Unbalanced (truncated) deep input is refused as too deep before parsing.
    expect(refusal("[".repeat(100_000)).code).toBe("json_too_deep");
  });

  it("counts objects and arrays alike", () => {
    const mixed = (levels: number) =>
      Array.from({ length: levels }, (_, i) => (i % 2 ? "[" : '{"k":')).join("") +
      "0" +
      Array.from({ length: levels }, (_, i) => (i % 2 ? "]" : "}")).reverse().join("");
    expect(() => assertJsonDepth(mixed(64))).not.toThrow();
    expect(() => JSON.parse(mixed(64))).not.toThrow();
    expect(() => assertJsonDepth(mixed(65))).toThrow(BatonError);
  });

  it("ignores brackets inside strings, escaped quotes included", () => {
    const inString = JSON.stringify({ summary: `a"b\\${"[{".repeat(200)}` });
    expect(() => assertJsonDepth(inString)).not.toThrow();
    expect(preparePacket(parseJsonText(inString), RECEIVED_AT).canonical.summary).toBe(`a"b\\${"[{".repeat(200)}`);
  });

  it("measures depth, not the number of brackets", () => {
    const wide = `[${Array.from({ length: 1000 }, () => nested(10)).join(",")}]`;
    expect(parseJsonText(wide)).toHaveLength(1000);
  });

  it("honours a custom limit", () => {
    expect(() => assertJsonDepth(nested(3), 3)).not.toThrow();
    expect(() => assertJsonDepth(nested(4), 3)).toThrow(/deeper than 3 levels/);
  });
});

describe("prototype safety", () => {
  const body =
    '{"summary":"s","__proto__":{"polluted":true,"next_action":"injected"},' +
    '"constructor":{"prototype":{"polluted":true}},"prototype":{"polluted":true}}';

  afterEach(() => {
    // If a test did pollute, clean up so other tests are not affected.
    delete (Object.prototype as Record<string, unknown>).polluted;
  });

  it("does not pollute Object.prototype", () => {
    const prepared = preparePacket(parseJsonText(body), RECEIVED_AT);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty("polluted");
    expect(Object.getPrototypeOf(prepared.canonical.extra)).toBe(Object.prototype);
  });

  it("keeps __proto__, constructor and prototype as plain data in extra", () => {
    const { canonical } = preparePacket(parseJsonText(body), RECEIVED_AT);
    expect(Object.keys(canonical.extra)).toEqual(["__proto__", "constructor", "prototype"]);
    expect(Object.getOwnPropertyDescriptor(canonical.extra, "__proto__")?.value).toEqual({ polluted: true, next_action: "injected" });
    expect(Object.getOwnPropertyDescriptor(canonical.extra, "constructor")?.value).toEqual({ prototype: { polluted: true } });
    expect((canonical.extra as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("does not let a __proto__ key supply known fields", () => {
    const validated = validatePacket(parseJsonText(body)) as Record<string, unknown>;
    expect(Object.getPrototypeOf(validated)).toBe(Object.prototype);
    expect(validated.next_action).toBeUndefined();
    const prepared = preparePacket(parseJsonText(body), RECEIVED_AT);
    expect(prepared.canonical.next_action).toBeUndefined();
    expect(prepared.flags.map((flag) => flag.code)).toContain("missing_next_action");
  });

  it("includes __proto__ in the content hash", () => {
    const withProto = packetContentHash(parseJsonText(body) as Record<string, unknown>);
    const without = packetContentHash({
      summary: "s",
      constructor: { prototype: { polluted: true } },
      prototype: { polluted: true },
    });
    expect(withProto).not.toBe(without);
  });

  it("is not a core-field packet just because Object.prototype is involved", () => {
    expect(refusal('{"__proto__":{"summary":"s"}}').code).toBe("no_core_fields");
  });
});

/**
 * Fields that name a thread (hardening, second round: a zero-width space, a right-to-left
 * override or a homoglyph made threads that look like `billing@main`).
 */
describe("fields that name a thread", () => {
  const base = { summary: "s", next_action: "n" };
  const refusal = (packet: Record<string, unknown>) => {
    try {
      validatePacket(packet);
    } catch (error) {
      expect(error).toBeInstanceOf(BatonError);
      expect((error as BatonError).code).toBe("invalid_fields");
      return (error as BatonError).details as { fields: FieldProblem[] };
    }
    throw new Error("expected a refusal");
  };

  it.each([
    ["thread", "billing\u200B@main", "U+200B"],
    ["project", "billing\u202E", "U+202E"],
    ["branch", "ma\u2066in", "U+2066"],
    ["topic", "a\u0000b", "U+0000"],
    ["session_id", "s\uFEFF1", "U+FEFF"],
    ["task_id", "T-\u200D1", "U+200D"],
    ["repo", "acme\n/evil", "U+000A"],
  ])("refuses %s with %s, naming the field and the character", (field, value, code) => {
    const { fields } = refusal({ ...base, [field]: value });
    expect(fields).toEqual([{ field, problem: `contains ${code}, which a person cannot see`, accepts: expect.stringContaining("without bidirectional controls") }]);
  });

  it("refuses an agent name with a bidirectional override, as a string and as an object", () => {
    expect(refusal({ ...base, agent: "bot\u202Eevil" }).fields[0]!.field).toBe("agent");
    expect(refusal({ ...base, agent: { name: "bot\u2067" } }).fields[0]!.field).toBe("agent.name");
  });

  it("keeps such characters in free text (shown, not refused)", () => {
    expect(() => validatePacket({ ...base, summary: "right\u202Eleft \u200B zero width" })).not.toThrow();
  });

  it("stores a name in NFC, so that one name typed two ways is one thread", () => {
    const composed = preparePacket({ ...base, project: "caf\u00E9", branch: "main", agent: "ren\u00E9" }, Date.now());
    const decomposed = preparePacket({ ...base, project: "cafe\u0301", branch: "main", agent: "rene\u0301" }, Date.now());
    expect(decomposed.threadKey).toBe(composed.threadKey);
    expect(decomposed.canonical.agent?.name).toBe("ren\u00E9");
  });
});

describe("what one packet may hold (PACKET_LIST_LIMITS)", () => {
  it("refuses a list past its limit with a 400 naming the field and the limit, and accepts the limit itself", () => {
    const base = { summary: "s" };
    const risks = (n: number) => Array.from({ length: n }, (_, index) => `risk R-${index}`);
    expect(() => validatePacket({ ...base, open_risks: risks(PACKET_LIST_LIMITS.open_risks) })).not.toThrow();
    try {
      validatePacket({ ...base, open_risks: risks(PACKET_LIST_LIMITS.open_risks + 1), preconditions: Array(PACKET_LIST_LIMITS.preconditions + 5).fill("p") });
      throw new Error("expected a refusal");
    } catch (error) {
      expect((error as BatonError).code).toBe("invalid_fields");
      expect(((error as BatonError).details as { fields: FieldProblem[] }).fields).toEqual([
        { field: "open_risks", problem: `holds ${PACKET_LIST_LIMITS.open_risks + 1} items`, accepts: `at most ${PACKET_LIST_LIMITS.open_risks} items` },
        { field: "preconditions", problem: `holds ${PACKET_LIST_LIMITS.preconditions + 5} items`, accepts: `at most ${PACKET_LIST_LIMITS.preconditions} items` },
      ]);
    }
  });
});
