import { packetJsonSchema } from "./json-schema";
import { packetInputSchema } from "./schema";

/**
 * Other producers' names for the contract's fields (docs/contract.md#other-formats,
 * docs/decisions/053-other-formats.md): camelCase
 * spellings of every contract key, derived from the schema so that a new field gets its alias
 * without an entry here, and the few synonyms of the v0 shape and of Markdown sections. The
 * packet as received is stored and hashed unchanged; only what is validated and normalised
 * is renamed. A name the contract already uses always wins over an alias.
 */

export const MAPPED_FORMATS = {
  camel_case_json: "camelCase JSON",
  v0_json: "the v0 JSON shape",
  markdown_front_matter: "Markdown with YAML front matter (HumanLayer create_handoff)",
  markdown_sections: "a Markdown handoff (HANDOFF.md, HANDOVER.md)",
} as const;
export type MappedFormat = keyof typeof MAPPED_FORMATS;

/** Where a Markdown handoff's verbatim text and format are kept in the received packet. */
export const RECEIVED_MARKDOWN_KEY = "received_markdown";

export interface MappedFrom {
  format: MappedFormat;
  /** Top-level renames, received name first, in the packet's order. */
  renamed: [from: string, to: string][];
  /** Keys renamed inside the contract's fields (`exitCode` → `exit_code`). */
  nestedRenames: number;
  /** Steps after the first of a list of next steps, kept in order under `next_steps`. */
  laterSteps: number;
}

export interface MappedPacket {
  packet: Record<string, unknown>;
  mappedFrom: MappedFrom | null;
}

/** `filesModified` → `files_modified`; a name without capitals is returned as it is. */
export function snakeCase(key: string): string {
  return key.replace(/(?<=[a-z0-9])([A-Z])/g, "_$1").toLowerCase();
}

const CONTRACT_KEYS: ReadonlySet<string> = new Set(Object.keys(packetInputSchema.shape));

let nestedKeys: ReadonlySet<string> | undefined;
/** Every property name with an underscore inside the contract's fields, from the JSON Schema. */
function contractNestedKeys(): ReadonlySet<string> {
  if (nestedKeys) return nestedKeys;
  const found = new Set<string>();
  const walk = (node: unknown, depth: number) => {
    if (!node || typeof node !== "object" || depth > 12) return;
    if (Array.isArray(node)) return node.forEach((item) => walk(item, depth + 1));
    for (const [key, value] of Object.entries(node)) {
      if (key === "properties" && value && typeof value === "object" && depth > 0) {
        for (const name of Object.keys(value)) if (name.includes("_")) found.add(name);
      }
      walk(value, depth + 1);
    }
  };
  walk(packetJsonSchema(), 0);
  nestedKeys = found;
  return found;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** Plain data only: a key such as `__proto__` stays a key, never a prototype. */
export function put(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Renames camelCase keys inside a contract field whose snake_case form the contract names. */
function snakeNested(value: unknown, counter: { renames: number }, depth = 0): unknown {
  if (depth > 8) return value;
  if (Array.isArray(value)) return value.map((item) => snakeNested(item, counter, depth + 1));
  if (!isRecord(value)) return value;
  const known = contractNestedKeys();
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const snake = snakeCase(key);
    const rename = snake !== key && known.has(snake) && !Object.hasOwn(value, snake);
    if (rename) counter.renames++;
    put(out, rename ? snake : key, snakeNested(item, counter, depth + 1));
  }
  return out;
}

const textOf = (item: Record<string, unknown>, keys: string[]) => keys.map((key) => item[key]).find((value) => typeof value === "string");

/** A blocker is a risk that stops the work: high unless the producer said otherwise. */
function blockerAsRisk(item: unknown): unknown {
  if (typeof item === "string") return { severity: "high", detail: item };
  if (!isRecord(item)) return item;
  const detail = textOf(item, ["issue", "blocker", "detail", "description", "text", "risk"]);
  return { ...item, severity: item.severity ?? "high", detail };
}

function questionItem(item: unknown): unknown {
  if (!isRecord(item) || typeof item.question === "string") return item;
  const question = textOf(item, ["text", "issue", "description"]);
  return question === undefined ? item : { ...item, question };
}

/**
 * Synonyms that are not spellings of a contract key, by their snake_case form. Each maps the
 * value onto contract fields of the packet being built; `merges` adds to a field the packet
 * already has instead of giving way to it.
 */
interface Synonym {
  to: string;
  merges?: true;
  apply: (value: unknown, out: Record<string, unknown>, later: { steps: number }) => void;
}
const SYNONYM_LIST: Record<string, Synonym> = {
  session_summary: { to: "summary", apply: (value, out) => put(out, "summary", value) },
  files_modified: { to: "changed_files", apply: (value, out) => put(out, "changed_files", value) },
  files_changed: { to: "changed_files", apply: (value, out) => put(out, "changed_files", value) },
  next_steps: {
    to: "next_action",
    apply: (value, out, later) => {
      if (!Array.isArray(value)) return put(out, "next_action", value);
      if (value.length) put(out, "next_action", value[0]);
      // The steps after the first stay in order, kept as an unknown field.
      if (value.length > 1) put(out, "next_steps", value.slice(1));
      later.steps = Math.max(value.length - 1, 0);
    },
  },
  blockers: {
    to: "open_risks",
    merges: true,
    apply: (value, out) => {
      const risks = Array.isArray(value) ? value.map(blockerAsRisk) : value;
      const before = out.open_risks;
      if (before === undefined) return put(out, "open_risks", risks);
      // Two lists join; otherwise the producer's own open_risks stays, for validation to judge.
      if (Array.isArray(before) && Array.isArray(risks)) put(out, "open_risks", [...before, ...risks]);
    },
  },
  open_questions: {
    to: "questions_for_human",
    apply: (value, out) => put(out, "questions_for_human", Array.isArray(value) ? value.map(questionItem) : value),
  },
};
// A Map: a key such as "__proto__" must find nothing, not Object.prototype.
const SYNONYMS = new Map(Object.entries(SYNONYM_LIST));
/** Names only the v0 shape uses; kept as unknown fields, they still say which format this is. */
const V0_KEPT = new Set(["open_todos", "decisions"]);

/** The received packet under the contract's names, and what was renamed (null when nothing was). */
export function mapToContract(received: unknown): MappedPacket {
  if (!isRecord(received)) return { packet: received as Record<string, unknown>, mappedFrom: null };
  const out: Record<string, unknown> = {};
  const renamed: [string, string][] = [];
  const counter = { renames: 0 };
  const later = { steps: 0 };
  let camel = false;
  let v0 = false;
  // Contract names first, then their camelCase spellings, then synonyms: a synonym never
  // overrides what the producer said under the contract's own name.
  const rest: string[] = [];
  for (const key of Object.keys(received)) {
    if (CONTRACT_KEYS.has(key)) put(out, key, key === "human" ? received[key] : snakeNested(received[key], counter));
    else rest.push(key);
  }
  const others: string[] = [];
  for (const key of rest) {
    const snake = snakeCase(key);
    if (CONTRACT_KEYS.has(snake) && !Object.hasOwn(out, snake)) {
      put(out, snake, snakeNested(received[key], counter));
      renamed.push([key, snake]);
      camel = true;
    } else others.push(key);
  }
  for (const key of others) {
    const snake = snakeCase(key);
    const synonym = SYNONYMS.get(snake);
    if (synonym && (synonym.merges || !Object.hasOwn(out, synonym.to))) {
      synonym.apply(snakeNested(received[key], counter), out, later);
      renamed.push([key, synonym.to]);
      if (snake === key) v0 = true;
      else camel = true;
    } else {
      if (V0_KEPT.has(key)) v0 = true;
      if (!Object.hasOwn(out, key)) put(out, key, received[key]);
    }
  }
  const markdown = received[RECEIVED_MARKDOWN_KEY];
  const markdownFormat = isRecord(markdown) && typeof markdown.format === "string" && Object.hasOwn(MAPPED_FORMATS, markdown.format)
    ? (markdown.format as MappedFormat)
    : null;
  const format: MappedFormat | null =
    markdownFormat ?? (camel || (counter.renames && !v0) ? "camel_case_json" : v0 && renamed.length ? "v0_json" : null);
  return {
    packet: out,
    mappedFrom: format ? { format, renamed, nestedRenames: counter.renames, laterSteps: later.steps } : null,
  };
}

/** The mapped_from flag's reason: the format and what was read as what. */
export function describeMapping(mapped: MappedFrom): string {
  const renames = mapped.renamed.map(([from, to]) => `${from} → ${to}`);
  if (mapped.nestedRenames) renames.push(`${mapped.nestedRenames} camelCase key${mapped.nestedRenames === 1 ? "" : "s"} inside fields`);
  const later = mapped.laterSteps ? ` ${mapped.laterSteps} later step${mapped.laterSteps === 1 ? "" : "s"} kept in next_steps.` : "";
  return `Mapped from ${MAPPED_FORMATS[mapped.format]}${renames.length ? `: ${renames.join(", ")}` : ""}.${later}`;
}
