// Secret redaction's engine: applies ./secret-patterns.ts to strings and walks JSON values, keys
// included, copy on write (docs/decisions/020-secret-redaction.md, items 1, 3 and 4).
import {
  looksLikeSecretValue,
  redactedAs,
  redactPrivateKeyBlocks,
  SECRET_PATTERNS,
  type Counter,
  type Pattern,
} from "./secret-patterns";

export { placeholder, PLACEHOLDER_PATTERN, type Counter } from "./secret-patterns";

export interface RedactionResult {
  value: unknown;
  count: number;
  /** The kinds found, sorted, each once. */
  kinds: string[];
}

/** Whether `text` contains one of `literals`. */
function containsAny(text: string, literals: readonly string[]): boolean {
  for (const literal of literals) if (text.includes(literal)) return true;
  return false;
}

/** Redacts the secrets in one string; `patterns` is the catalogue (a test passes it without its prefilters). */
export function redactString(text: string, counter: Counter = { count: 0, kinds: new Set() }, patterns: readonly Pattern[] = SECRET_PATTERNS): string {
  let out = redactPrivateKeyBlocks(text, counter);
  // The text in lower case, for the patterns that ignore case: made once, again after a replacement.
  let lower: string | null = null;
  for (const pattern of patterns) {
    // A string that cannot hold a match is not scanned (Pattern's minLength and needs).
    if (out.length < (pattern.minLength ?? 0)) continue;
    if (pattern.needs && !containsAny(pattern.regex.ignoreCase ? (lower ??= out.toLowerCase()) : out, pattern.needs)) continue;
    pattern.regex.lastIndex = 0;
    const replace = pattern.replace;
    const replaced = out.replace(pattern.regex, replace ? (match: string, ...groups: unknown[]) => replace(counter, match, ...(groups as string[])) : () => redactedAs(counter, pattern.kind));
    if (replaced !== out) lower = null;
    out = replaced;
  }
  return out;
}

/** Keys whose one-word string value is a credential when it looks like one. */
const SECRET_KEY_NAME = /passw(?:or)?d|passphrase|secret|token|api[_-]?key|apikey|app[_-]?key|access[_-]?key|private[_-]?key|credential/i;

function keyKind(key: string): string {
  const name = key.toLowerCase();
  if (/passw|passphrase/.test(name)) return "password";
  if (/api[_-]?key|apikey|access[_-]?key/.test(name)) return "api-key";
  if (name.includes("token")) return "token";
  return "secret";
}

function redactUnder(key: string | null, text: string, counter: Counter): string {
  const redacted = redactString(text, counter);
  if (redacted !== text || key === null || key.length > 64 || !SECRET_KEY_NAME.test(key)) return redacted;
  if (/\s/.test(text) || !looksLikeSecretValue(text)) return text;
  return redactedAs(counter, keyKind(key));
}

// Recursive like canonicalJson: callers parse with the 64-level depth limit (lib/contract/validate.ts).
function walk(value: unknown, key: string | null, counter: Counter): unknown {
  if (typeof value === "string") return redactUnder(key, value, counter);
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const next = walk(item, key, counter);
      if (next !== item) {
        copy ??= value.slice();
        copy[i] = next;
      }
    }
    return copy ?? value;
  }
  const record = value as Record<string, unknown>;
  // Made at the first change: most objects have none.
  let changed: Map<string, unknown> | null = null;
  let renamed: Map<string, string> | null = null;
  for (const name of Object.keys(record)) {
    // A secret used as a key (a token map, a pasted env object) is replaced like any other.
    const safeName = redactString(name, counter);
    if (safeName !== name) (renamed ??= new Map()).set(name, safeName);
    const item = record[name];
    const next = walk(item, name, counter);
    if (next !== item) (changed ??= new Map()).set(name, next);
  }
  if (!changed && !renamed) return value;
  // Own properties defined one by one: a `__proto__` key stays a key and sets no prototype.
  const copy: Record<string, unknown> = {};
  for (const name of Object.keys(record)) {
    const safeName = renamed?.get(name);
    let key = safeName ?? name;
    // Two keys redacted alike stay two keys.
    for (let n = 2; safeName !== undefined && Object.hasOwn(copy, key); n++) key = `${safeName}#${n}`;
    Object.defineProperty(copy, key, { value: changed?.has(name) ? changed.get(name) : record[name], enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/**
 * Replaces the secrets in a parsed JSON value's strings with `[redacted:<kind>]`.
 * Returns the same value (not a copy) when there was nothing to redact.
 */
export function redactSecrets(value: unknown): RedactionResult {
  const counter: Counter = { count: 0, kinds: new Set() };
  const redacted = walk(value, null, counter);
  return { value: redacted, count: counter.count, kinds: [...counter.kinds].sort() };
}
