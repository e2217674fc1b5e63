import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalJson, packetContentHash, sha256Hex } from "./canonical-json";
import { preparePacket } from "./prepare";
import { parseJsonText } from "./validate";

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const hashOfText = (text: string) => packetContentHash(parseJsonText(text) as Record<string, unknown>);

describe("canonicalJson", () => {
  it("sorts keys, nested ones too, and writes no whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: "x y" } })).toBe(
      '{"a":{"c":"x y","d":[3,{"y":null,"z":true}]},"b":1}',
    );
  });

  it("keeps array order", () => {
    expect(canonicalJson([2, 1])).toBe("[2,1]");
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
  });

  it("drops undefined object values and writes undefined array items as null", () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(canonicalJson([undefined, 1])).toBe("[null,1]");
    expect(canonicalJson(undefined)).toBe("null");
  });

  it("escapes strings and keys as JSON does", () => {
    expect(canonicalJson({ 'k"\n': "line\nbreak \u2028 \"quoted\"" })).toBe(JSON.stringify({ 'k"\n': "line\nbreak \u2028 \"quoted\"" }));
  });

  it("writes numbers as JSON.stringify does", () => {
    expect(canonicalJson({ n: 1.0, m: 1e21, f: 0.1 })).toBe('{"f":0.1,"m":1e+21,"n":1}');
  });

  it("keeps a __proto__ key as data", () => {
    const value = JSON.parse('{"__proto__":{"a":1},"b":2}');
    expect(canonicalJson(value)).toBe('{"__proto__":{"a":1},"b":2}');
  });

  it("sha256Hex is the hex SHA-256 of the UTF-8 text", () => {
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(sha256Hex("é")).toBe(sha256("é"));
  });
});

describe("packetContentHash", () => {
  const base = {
    summary: "did things",
    open_risks: [{ severity: "high", detail: "d", id: "r1" }],
    next_action: { action: "go", owner: "agent" },
  };

  it("is the SHA-256 of the canonical JSON", () => {
    expect(packetContentHash({ b: 1, a: 2 })).toBe(sha256('{"a":2,"b":1}'));
  });

  it("does not depend on key order, at the top level or nested", () => {
    const reordered = {
      next_action: { owner: "agent", action: "go" },
      open_risks: [{ id: "r1", detail: "d", severity: "high" }],
      summary: "did things",
    };
    expect(packetContentHash(reordered)).toBe(packetContentHash(base));
  });

  it("does not depend on insignificant whitespace in the JSON text", () => {
    const compact = JSON.stringify(base);
    const pretty = JSON.stringify(base, null, 2);
    const loose = ` \n\t${compact.replace(/:/g, " : ").replace(/,/g, " ,\n ")}\r\n`;
    expect(pretty).not.toBe(compact);
    expect(hashOfText(pretty)).toBe(hashOfText(compact));
    expect(hashOfText(loose)).toBe(hashOfText(compact));
  });

  it("ignores the human section", () => {
    const withHuman = { ...base, human: { revision: 3, decision: { kind: "approved", by: "mei" } } };
    const otherHuman = { ...base, human: { revision: 0 } };
    expect(packetContentHash(withHuman)).toBe(packetContentHash(base));
    expect(packetContentHash(otherHuman)).toBe(packetContentHash(base));
  });

  it("changes when any value changes, however deep", () => {
    const hash = packetContentHash(base);
    expect(packetContentHash({ ...base, summary: "did things." })).not.toBe(hash);
    expect(packetContentHash({ ...base, open_risks: [{ severity: "low", detail: "d", id: "r1" }] })).not.toBe(hash);
    expect(packetContentHash({ ...base, next_action: { action: "go", owner: "Agent" } })).not.toBe(hash);
  });

  it("changes when whitespace inside a string changes (it is content)", () => {
    expect(packetContentHash({ ...base, summary: "did  things" })).not.toBe(packetContentHash(base));
  });

  it("changes with an added field, an unknown one included, and with array order", () => {
    const hash = packetContentHash(base);
    expect(packetContentHash({ ...base, x_cost_usd: 1 })).not.toBe(hash);
    const two = { summary: "s", changed_files: ["a", "b"] };
    expect(packetContentHash(two)).not.toBe(packetContentHash({ summary: "s", changed_files: ["b", "a"] }));
  });

  it("distinguishes a number from the same digits as a string", () => {
    expect(packetContentHash({ summary: "s", task_id: 1 })).not.toBe(packetContentHash({ summary: "s", task_id: "1" }));
  });

  it("is the hash preparePacket returns", () => {
    const text = '{ "summary": "s",\n  "human": {"revision": 1}, "branch": "main" }';
    expect(preparePacket(parseJsonText(text), 0).contentHash).toBe(sha256('{"branch":"main","summary":"s"}'));
  });
});
