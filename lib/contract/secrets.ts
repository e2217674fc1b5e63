// Secret redaction's engine: applies ./secret-patterns.ts to strings and walks JSON values, keys
// included, copy on write (docs/decisions/020-secret-redaction.md, items 1, 3 and 4).
import {
  looksLikeSecretValue,
  redactedAs,
  redactPrivateKeyBlocks,
  SECRET_PATTERNS,
  type Counter,
} from "./secret-patterns";

export { placeholder, PLACEHOLDER_PATTERN, type Counter } from "./secret-patterns";

export interface RedactionResult {
  value: unknown;
  count: number;
  /** The kinds found, sorted, each once. */
  kinds: string[];
}

/** Redacts the secrets in one string. */
export function redactString(text: string, counter: Counter = { count: 0, kinds: new Set() }): string {
  let out = redactPrivateKeyBlocks(text, counter);
  for (const pattern of SECRET_PATTERNS) {
    if (pattern.needs !== undefined && !out.includes(pattern.needs)) continue;
    pattern.regex.lastIndex = 0;
    const replace = pattern.replace;
    out = out.replace(pattern.regex, replace ? (match: string, ...groups: unknown[]) => replace(counter, match, ...(groups as string[])) : () => redactedAs(counter, pattern.kind));
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
  const changed = new Map<string, unknown>();
  const renamed = new Map<string, string>();
  for (const name of Object.keys(record)) {
    // A secret used as a key (a token map, a pasted env object) is replaced like any other.
    const safeName = redactString(name, counter);
    if (safeName !== name) renamed.set(name, safeName);
    const item = record[name];
    const next = walk(item, name, counter);
    if (next !== item) changed.set(name, next);
  }
  if (!changed.size && !renamed.size) return value;
  // Own properties defined one by one: a `__proto__` key stays a key and sets no prototype.
  const copy: Record<string, unknown> = {};
  for (const name of Object.keys(record)) {
    let key = renamed.get(name) ?? name;
    // Two keys redacted alike stay two keys.
    for (let n = 2; renamed.has(name) && Object.hasOwn(copy, key); n++) key = `${renamed.get(name)}#${n}`;
    Object.defineProperty(copy, key, { value: changed.has(name) ? changed.get(name) : record[name], enumerable: true, writable: true, configurable: true });
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
