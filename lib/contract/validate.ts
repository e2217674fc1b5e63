import type { z } from "zod";
import { BatonError } from "../core/errors";
import { invisibleCharacter, INVISIBLE_SET } from "./invisible";
import { CORE_FIELDS, JSON_MAX_DEPTH, PACKET_LIST_LIMITS, packetInputSchema, SHAPES, type PacketInput } from "./schema";

export interface FieldProblem {
  field: string;
  problem: string;
  accepts: string;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return "a string";
  if (typeof value === "number") return "a number";
  if (typeof value === "boolean") return "a boolean";
  return typeof value;
}

/** Refuses JSON nested deeper than the limit before JSON.parse can recurse into it. */
export function assertJsonDepth(text: string, maxDepth = JSON_MAX_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 92 /* \ */) i++;
      else if (code === 34 /* " */) inString = false;
    } else if (code === 34) inString = true;
    else if (code === 91 /* [ */ || code === 123 /* { */) {
      if (++depth > maxDepth) {
        throw new BatonError("json_too_deep", `JSON is nested deeper than ${maxDepth} levels (a packet may nest ${JSON_MAX_DEPTH}); flatten the packet.`, {
          max_depth: maxDepth,
        });
      }
    } else if (code === 93 || code === 125) depth--;
  }
}

export function parseJsonText(text: string, maxDepth = JSON_MAX_DEPTH): unknown {
  assertJsonDepth(text, maxDepth);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new BatonError("invalid_json", `The body is not valid JSON (${describeJsonError(error)}). Send one JSON object.`);
  }
}

/**
 * What was wrong with some JSON, without echoing any of it: the parser's own message
 * quotes the input, and a file that is not JSON may be a secret (a symlinked .env).
 */
export function describeJsonError(error: unknown): string {
  const message = error instanceof Error ? error.message : "";
  const position = /at position (\d+)/.exec(message)?.[1];
  const at = position === undefined ? "" : ` at position ${position}`;
  if (/Unexpected end of JSON input/i.test(message)) return "it ends before the JSON value is complete";
  if (/Unexpected non-whitespace character after JSON/i.test(message)) return `unexpected text after the JSON value${at}`;
  if (/Bad control character/i.test(message)) return `a control character inside a string${at}`;
  if (/Unexpected token|Expected/i.test(message)) return `unexpected character${at}`;
  return `syntax error${at}`;
}

function pathToField(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (out, part) => (typeof part === "number" ? `${out}[${part}]` : out ? `${out}.${String(part)}` : String(part)),
    "",
  );
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const part of path) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[part];
  }
  return value;
}

/**
 * Characters a person cannot see or that reorder what they see: bidirectional controls,
 * zero-width and other invisible characters, and control characters. In the fields that
 * name a thread they make keys that look like another's (`billing@main` twice), so such
 * a field is refused rather than cleaned (a cleaned key would merge two threads silently).
 */
/** Every such character, for callers that must show or strip them. */
export const INVISIBLE_CHARACTERS = new RegExp(INVISIBLE_SET, "gu");
const IDENTITY_FIELDS = ["thread", "session_id", "task_id", "project", "repo", "branch", "topic"] as const;
const IDENTITY_ACCEPTS = "a string without bidirectional controls, zero-width, invisible or control characters";

export { invisibleCharacter };

function identityProblems(input: PacketInput): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const check = (field: string, value: unknown) => {
    const found = typeof value === "string" ? invisibleCharacter(value) : null;
    if (found) problems.push({ field, problem: `contains ${found}, which a person cannot see`, accepts: IDENTITY_ACCEPTS });
  };
  for (const field of IDENTITY_FIELDS) check(field, input[field]);
  check(typeof input.agent === "string" ? "agent" : "agent.name", typeof input.agent === "string" ? input.agent : input.agent?.name);
  return problems;
}

function limitProblems(input: PacketInput): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const [field, limit] of Object.entries(PACKET_LIST_LIMITS)) {
    const value: unknown = input[field as keyof PacketInput];
    const items = Array.isArray(value) ? value.length : field === "clean_state" && value && typeof value === "object" ? ((value as { blocking?: unknown[] }).blocking?.length ?? 0) : 0;
    if (items > limit) problems.push({ field, problem: `holds ${items} items`, accepts: `at most ${limit} items` });
  }
  return problems;
}

/** Fields whose accepted shapes are not listed under their own name in SHAPES. */
const FIELD_SHAPES: Readonly<Record<string, string>> = { created_at: SHAPES.timestamp };

function fieldProblems(root: unknown, error: z.ZodError): FieldProblem[] {
  const seen = new Set<string>();
  const problems: FieldProblem[] = [];
  for (const issue of error.issues) {
    // Report at the item (open_risks[2]) rather than deep inside a union branch.
    const path = issue.path.slice(0, typeof issue.path[1] === "number" ? 2 : 1);
    const field = pathToField(path);
    if (seen.has(field)) continue;
    seen.add(field);
    const top = String(path[0]);
    const accepts = FIELD_SHAPES[top] ?? SHAPES[top as keyof typeof SHAPES] ?? SHAPES.string;
    const item = path.length > 1 ? `an item that is ${describeType(valueAt(root, path))}` : describeType(valueAt(root, path));
    problems.push({ field, problem: `got ${item}`, accepts });
  }
  return problems;
}

/**
 * Checks that a parsed body can be a packet. Throws a BatonError naming every
 * offending field and the shapes it accepts; returns the validated input.
 */
export function validatePacket(value: unknown): PacketInput & Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new BatonError(
      "not_a_packet",
      `A packet is a JSON object; got ${describeType(value)}. To send several, post {"packets": [...]}.`,
    );
  }
  // null counts as absent: {"summary": null} carries no core field.
  if (!CORE_FIELDS.some((field) => Object.hasOwn(value, field) && (value as Record<string, unknown>)[field] != null)) {
    throw new BatonError(
      "no_core_fields",
      `This object carries none of the seven core fields (${CORE_FIELDS.join(", ")}); it is not a handoff packet.`,
      { core_fields: CORE_FIELDS },
    );
  }
  const result = packetInputSchema.safeParse(value);
  const fields = result.success ? [...identityProblems(result.data), ...limitProblems(result.data)] : fieldProblems(value, result.error);
  if (fields.length) {
    throw new BatonError(
      "invalid_fields",
      `Not stored: ${fields.map((f) => `${f.field} (${f.problem}) accepts ${f.accepts}`).join("; ")}.`,
      { fields },
    );
  }
  return result.data as PacketInput & Record<string, unknown>;
}
