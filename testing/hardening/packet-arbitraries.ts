import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { INVISIBLE_CHARACTERS } from "../../lib/contract/validate";
import { JSON_MAX_DEPTH } from "../../lib/contract/schema";

/**
 * Generators of request bodies for the fuzzed ingest test. Bodies are built as
 * JSON text by hand, so that keys such as `__proto__` and repeated keys reach
 * the server exactly as a hostile client would send them.
 */

/** A JSON value whose objects are lists of entries (keys may repeat or be `__proto__`). */
export type Tree = null | boolean | number | string | Tree[] | { entries: [string, Tree][] };

export function serialise(tree: Tree): string {
  if (tree === null || typeof tree !== "object") return JSON.stringify(tree);
  if (Array.isArray(tree)) return `[${tree.map(serialise).join(",")}]`;
  return `{${tree.entries.map(([key, value]) => `${JSON.stringify(key)}:${serialise(value)}`).join(",")}}`;
}

const obj = (entries: [string, Tree][]): Tree => ({ entries });

/** A parsed JSON value as a Tree. */
function toTree(value: unknown): Tree {
  if (value === null || typeof value !== "object") return value as Tree;
  if (Array.isArray(value)) return value.map(toTree);
  return obj(Object.entries(value).map(([key, item]) => [key, toTree(item)]));
}

const EXAMPLES_DIR = fileURLToPath(new URL("../fixtures/examples/packets/", import.meta.url));
/** The example packets (testing/fixtures/examples/packets), one per accepted producer shape. */
export const EXAMPLE_PACKETS: Record<string, unknown>[] = readdirSync(EXAMPLES_DIR)
  .filter((name) => name.endsWith(".json"))
  .sort()
  .map((name) => JSON.parse(readFileSync(`${EXAMPLES_DIR}${name}`, "utf8")) as Record<string, unknown>);

const text = fc.string({ maxLength: 40, unit: "grapheme" });
/** Fields that name a thread refuse invisible characters (lib/contract/validate.ts): valid ones hold none. */
const name = text.map((value) => value.replace(INVISIBLE_CHARACTERS, ""));
const argv = fc.oneof(text, fc.array(text, { maxLength: 4 }));
const exitCode = fc.oneof(fc.integer({ min: -1, max: 255 }), fc.constant(null));
const finite = fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 });
const list = <T>(item: fc.Arbitrary<T>) => fc.array(item, { maxLength: 4 });
const atLeastOne = <T extends object>(record: fc.Arbitrary<T>, keys: (keyof T)[]) =>
  record.filter((value) => keys.some((key) => (value as Record<keyof T, unknown>)[key] !== undefined));

/** Every field in every shape the contract accepts (lib/contract/schema.ts SHAPES). */
const fields = {
  schema_version: fc.constantFrom(1, "1", "baton.handoff/v1", null),
  thread: name,
  session_id: name,
  task_id: fc.oneof(name, fc.integer()),
  agent: fc.oneof(name, fc.record({ name, kind: fc.option(text, { nil: undefined }), model: fc.option(text, { nil: undefined }) })),
  project: name,
  branch: name,
  topic: name,
  status: text,
  created_at: fc.oneof(
    fc.date({ min: new Date("2000-01-01"), max: new Date("2090-01-01"), noInvalidDate: true }).map((d) => d.toISOString()),
    fc.integer({ min: 0, max: 4_000_000_000 }),
    fc.integer({ min: 0, max: 4_000_000_000 }).map(String),
  ),
  summary: fc.oneof(text, fc.constant(null)),
  changed_files: list(fc.oneof(text, fc.record({ path: text, change: fc.option(text, { nil: undefined }), additions: fc.option(fc.nat(), { nil: undefined }), deletions: fc.option(fc.nat(), { nil: undefined }) }))),
  commands_run: list(fc.oneof(text, fc.record({ command: argv, exit_code: fc.option(exitCode, { nil: undefined }), duration_ms: fc.option(finite, { nil: undefined }) }))),
  failed_attempts: list(
    fc.oneof(
      text,
      fc.record({ attempt: argv, reason: fc.option(text, { nil: undefined }), exit_code: fc.option(exitCode, { nil: undefined }) }),
      fc.record({ command: argv, why: fc.option(text, { nil: undefined }), error: fc.option(text, { nil: undefined }) }),
    ),
  ),
  open_risks: list(
    fc.oneof(
      text,
      atLeastOne(
        fc.record(
          { severity: fc.oneof(fc.constantFrom("low", "medium", "high", "critical", "P0"), fc.integer({ min: 0, max: 5 })), detail: text, description: text, risk: text, text, id: fc.oneof(text, fc.nat()), mitigation: text },
          { requiredKeys: [] },
        ),
        ["detail", "description", "risk", "text"],
      ),
    ),
  ),
  next_action: fc.oneof(
    text,
    fc.record({ action: text, command: fc.option(argv, { nil: undefined }), owner: fc.option(text, { nil: undefined }) }),
    fc.record({ description: text }),
  ),
  verdict_pointer: fc.oneof(
    text,
    fc.record({ verdict: text, review: fc.option(text, { nil: undefined }) }),
    list(fc.oneof(text, fc.record({ verification: text }))),
  ),
  questions_for_human: list(fc.oneof(text, fc.record({ question: text, id: fc.option(fc.oneof(text, fc.nat()), { nil: undefined }), options: fc.option(list(text), { nil: undefined }), blocking: fc.option(fc.boolean(), { nil: undefined }) }))),
  assumptions_to_validate: list(fc.oneof(text, fc.record({ text, score: fc.option(finite, { nil: undefined }) }))),
  clean_state: fc.oneof(list(fc.oneof(text, fc.record({ check: text, detail: text }))), fc.record({ blocking: list(text) })),
  preconditions: list(text),
  verdict: fc.record({ passed: fc.boolean(), review_total: fc.option(finite, { nil: undefined }), review_verdict: fc.option(text, { nil: undefined }) }, { requiredKeys: [] }),
  feedback_tail: list(fc.record({ command: argv, exit_code: exitCode })),
};

/** A packet valid under the contract: any subset of fields in any accepted shape, a core field always present, a nonce keeping most of them new. */
export const validPacket: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(fc.record(fields, { requiredKeys: [] }), fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }).map((k) => `x_${k}`), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 }), fc.nat())
  .map(([packet, unknown, nonce]) => {
    const out: Record<string, unknown> = { ...unknown, ...packet };
    if (out.summary == null) out.summary = `fuzz ${nonce}`;
    return out;
  });

/** A valid packet with one field replaced by a value of any type, or removed. */
export const mutatedPacket: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(fc.oneof(validPacket, fc.constantFrom(...EXAMPLE_PACKETS)), fc.constantFrom(...Object.keys(fields)), fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.constant(undefined)))
  .map(([packet, field, value]) => {
    const out = { ...packet };
    if (value === undefined) delete out[field];
    else out[field] = value;
    return out;
  });

/** Not a packet at all: any JSON value (arrays, scalars, objects without core fields). */
export const wrongType = fc.jsonValue({ maxDepth: 4 });

const HOSTILE_KEYS = ["__proto__", "constructor", "prototype", "polluted", "toString", "hasOwnProperty", "valueOf", "__defineGetter__"];
const POLLUTION: Tree = obj([["polluted", "yes"], ["__proto__", obj([["polluted", "yes"]])], ["prototype", obj([["polluted", "yes"]])]]);

/** Trees with hostile keys at every level. */
const { hostile } = fc.letrec<{ hostile: Tree }>((tie) => ({
  hostile: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(POLLUTION),
    fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(null)),
    fc.array(tie("hostile"), { maxLength: 3 }),
    fc.array(fc.tuple(fc.oneof(fc.constantFrom(...HOSTILE_KEYS), text), tie("hostile")), { maxLength: 4 }).map(obj),
  ),
}));

/** A packet (valid or not) carrying `__proto__`, `constructor` and `prototype` keys at the top, in core fields' items and deep inside. */
export const hostileKeysBody = fc
  .tuple(validPacket, fc.array(fc.tuple(fc.constantFrom(...HOSTILE_KEYS), hostile), { minLength: 1, maxLength: 4 }), hostile)
  .map(([packet, topEntries, inner]) => {
    const entries: [string, Tree][] = Object.entries(packet).map(([key, value]) => [key, toTree(JSON.parse(JSON.stringify(value)))]);
    entries.push(...topEntries);
    entries.push(["open_risks", [obj([["detail", "risk"], ["__proto__", inner], ["constructor", obj([["prototype", POLLUTION]])]])]]);
    entries.push(["x_nested", obj([["__proto__", inner]])]);
    return serialise(obj(entries));
  });

/** Nested `depth` levels deep in total (the packet object is level 1), as arrays or objects. */
export function nestedPacket(depth: number, asObjects: boolean, nonce: number): string {
  const inner = depth - 1;
  const open = asObjects ? '{"a":'.repeat(inner) : "[".repeat(inner);
  const close = asObjects ? "}".repeat(inner) : "]".repeat(inner);
  return `{"summary":"deep ${depth} ${nonce}","x_deep":${open}1${close}}`;
}

export const deepBody = fc
  .tuple(fc.integer({ min: JSON_MAX_DEPTH - 4, max: JSON_MAX_DEPTH + 4 }), fc.boolean(), fc.nat())
  .map(([depth, asObjects, nonce]) => ({ depth, body: nestedPacket(depth, asObjects, nonce) }));

/** Way past the limit: thousands of levels, which a recursive parser would choke on. */
export const veryDeepBody = fc.integer({ min: 1_000, max: 200_000 }).map((depth) => ({ depth, body: nestedPacket(depth, false, depth) }));

const INVALID_UTF8: number[][] = [[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xf4, 0x90, 0x80, 0x80]];

/** A valid packet's bytes with an invalid UTF-8 sequence spliced into its summary. */
export const invalidUtf8Body = fc.tuple(fc.nat(), fc.constantFrom(...INVALID_UTF8), fc.nat({ max: 20 })).map(([nonce, bad, at]) => {
  const prefix = `{"summary":"broken ${nonce} `;
  const filler = "y".repeat(at);
  return Buffer.concat([Buffer.from(prefix + filler), Buffer.from(bad), Buffer.from(`"}`)]);
});

/** A summary of `size` ASCII characters: the body's bytes are size + the wrapper's. */
export function packetOfSummaryLength(size: number, tag: string): string {
  return `{"summary":"${tag}${"x".repeat(Math.max(0, size - tag.length))}"}`;
}

/** A batch of valid, mutated and non-packet items. */
export const batchBody = fc
  .array(fc.oneof(validPacket, mutatedPacket, wrongType), { minLength: 0, maxLength: 8 })
  .map((packets) => JSON.stringify({ packets }));
