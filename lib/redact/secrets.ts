/**
 * Secret redaction (issue 8, item 7; docs/decisions/020-secret-redaction.md).
 *
 * `redactSecrets` deep-walks a parsed JSON value and replaces secrets inside its
 * string VALUES with `[redacted:<kind>]`. Object keys are kept as they are: a key
 * names a field (`api_key`, `GITHUB_TOKEN`), it rarely holds the secret itself, and
 * renaming keys would change the packet's shape. A key does serve as context: a
 * one-word string under a key such as `password` or `api_key` is redacted whole
 * when it looks like a secret.
 *
 * Properties the tests hold it to:
 * - idempotent: redacting twice equals redacting once; the placeholder contains
 *   `[` and `]`, which no pattern below accepts, so it never matches again;
 * - linear: every pattern is a literal prefix followed by greedy character
 *   classes with no nested quantifiers, token patterns may only start where the
 *   previous character cannot continue the token (a lookbehind), so a run of
 *   hostile text is scanned a bounded number of times; PEM blocks are found with
 *   two forward scans, never a lazy `[\s\S]*?` per candidate;
 * - copy on write: a value without secrets comes back as the same object.
 */

export interface RedactionResult {
  value: unknown;
  count: number;
  /** The kinds found, sorted, each once. */
  kinds: string[];
}

export const placeholder = (kind: string) => `[redacted:${kind}]`;
/** The placeholder's own shape, for tests and for readers of redacted packets. */
export const PLACEHOLDER_PATTERN = /\[redacted:[a-z0-9-]+\]/g;

export interface Counter {
  count: number;
  kinds: Set<string>;
}

const hit = (counter: Counter, kind: string): string => {
  counter.count++;
  counter.kinds.add(kind);
  return placeholder(kind);
};

/** A value that reads like a secret rather than a word, a path, a reference or a mask. */
export function looksLikeSecretValue(value: string, minLength = 12): boolean {
  if (value.length < minLength || value.includes("[redacted:")) return false;
  if (/^[$%{<*/.~#[]/.test(value)) return false; // $TOKEN, %VAR%, ${{ secrets.X }}, <password>, ****, paths, placeholders
  if (value.includes("://")) return false;
  if (/\.[A-Za-z][A-Za-z0-9]{0,4}$/.test(value)) return false; // a file name: token.txt, key.pem
  return /[0-9]/.test(value) && /[A-Za-z]/.test(value);
}

/** Mixed case and a digit: what a random key has and a word or a kebab-case name does not. */
const looksRandom = (body: string) => /[0-9]/.test(body) && /[a-z]/.test(body) && /[A-Z]/.test(body);

type Replacer = (counter: Counter, match: string, ...groups: string[]) => string;
interface Pattern {
  kind: string;
  regex: RegExp;
  replace?: Replacer;
}

// Token patterns start only where the previous character could not be part of the token.
const TOKEN_START = "(?<![A-Za-z0-9_-])";

const PATTERNS: Pattern[] = [
  { kind: "aws-access-key-id", regex: /(?<![A-Za-z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])/g },
  {
    kind: "aws-secret-access-key",
    regex: /((?:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key)["']?\s{0,4}[=:]\s{0,4}["']?)([A-Za-z0-9/+]{40,})/gi,
    replace: (counter, _match, prefix) => `${prefix}${hit(counter, "aws-secret-access-key")}`,
  },
  { kind: "github-token", regex: new RegExp(`${TOKEN_START}gh[pousr]_[A-Za-z0-9]{36,}`, "g") },
  { kind: "github-token", regex: new RegExp(`${TOKEN_START}github_pat_[A-Za-z0-9_]{22,}`, "g") },
  { kind: "slack-token", regex: new RegExp(`${TOKEN_START}(?:xox[abprs]|xapp)-[A-Za-z0-9-]{10,}`, "g") },
  {
    kind: "slack-webhook",
    regex: /(https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9/_-]{8,}/g,
    replace: (counter, _match, prefix) => `${prefix}${hit(counter, "slack-webhook")}`,
  },
  {
    kind: "model-provider-key",
    regex: new RegExp(`${TOKEN_START}sk-(ant-|proj-|svcacct-|admin-)?([A-Za-z0-9_-]{20,})`, "g"),
    replace: (counter, match, family, body) =>
      looksRandom(body) ? hit(counter, family === "ant-" ? "anthropic-key" : "openai-key") : match,
  },
  { kind: "google-api-key", regex: new RegExp(`${TOKEN_START}AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])`, "g") },
  { kind: "stripe-key", regex: new RegExp(`${TOKEN_START}(?:sk|rk)_live_[0-9A-Za-z]{16,}`, "g") },
  { kind: "baton-token", regex: new RegExp(`${TOKEN_START}btn_[a-z0-9]{8}_[A-Za-z0-9]{32}(?![A-Za-z0-9])`, "g") },
  { kind: "jwt", regex: new RegExp(`${TOKEN_START}eyJ[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{10,}`, "g") },
  {
    kind: "bearer-token",
    regex: /\b([Bb]earer\s{1,4})([A-Za-z0-9._~+/-]{20,}=*)/g,
    replace: (counter, match, prefix, token) =>
      /^[^/.]/.test(token) && /[0-9]/.test(token) && /[A-Za-z]/.test(token) ? `${prefix}${hit(counter, "bearer-token")}` : match,
  },
  {
    // scheme://user:password@host: the password only; user and host stay readable.
    kind: "url-password",
    regex: /([a-zA-Z][a-zA-Z0-9+.-]{0,20}:\/\/[^\s/:@"'<>[\]]{1,256}:)([^\s/@"'<>[\]]{1,256})@/g,
    replace: (counter, match, prefix, password) =>
      /^(?:[$%{<*]|\[redacted:)/.test(password) ? match : `${prefix}${hit(counter, "url-password")}@`,
  },
  {
    // password=..., api_key: ..., GITHUB_TOKEN=..., "secret": "...": the value only, when it looks like a secret.
    kind: "assignment",
    regex:
      /((?<![A-Za-z])(passw(?:or)?d|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key)[A-Za-z0-9_-]{0,20}["']?\s{0,4}[=:]\s{0,4}["']?)([^\s"'`,;&<>(){}[\]]{12,})/gi,
    replace: (counter, match, prefix, keyword, value) => (looksLikeSecretValue(value) ? `${prefix}${hit(counter, assignmentKind(keyword))}` : match),
  },
];

function assignmentKind(keyword: string): string {
  const word = keyword.toLowerCase();
  if (word.startsWith("pass")) return "password";
  if (word === "token") return "token";
  if (word.includes("key")) return "api-key";
  return "secret";
}

const PEM_BEGIN = /-----BEGIN ([A-Z0-9 ]{0,40})PRIVATE KEY( BLOCK)?-----/g;
const PEM_END = /-----END [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----/g;

/** Private key blocks, BEGIN to END (or to the end of the text when cut off), found by forward scans only. */
function redactPem(text: string, counter: Counter): string {
  if (!text.includes("PRIVATE KEY")) return text;
  let out = "";
  let from = 0;
  for (;;) {
    PEM_BEGIN.lastIndex = from;
    const begin = PEM_BEGIN.exec(text);
    if (!begin) break;
    PEM_END.lastIndex = begin.index + begin[0].length;
    const end = PEM_END.exec(text);
    out += text.slice(from, begin.index) + hit(counter, "private-key");
    if (!end) return out; // a key cut off: everything after its BEGIN line goes
    from = end.index + end[0].length;
  }
  return out + text.slice(from);
}

/** Redacts the secrets in one string. */
export function redactString(text: string, counter: Counter = { count: 0, kinds: new Set() }): string {
  let out = redactPem(text, counter);
  for (const pattern of PATTERNS) {
    pattern.regex.lastIndex = 0;
    const replace = pattern.replace;
    out = out.replace(pattern.regex, replace ? (match: string, ...groups: unknown[]) => replace(counter, match, ...(groups as string[])) : () => hit(counter, pattern.kind));
  }
  return out;
}

/** Keys whose one-word string value is a credential when it looks like one. */
const SECRET_KEY_NAME = /passw(?:or)?d|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credential/i;

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
  return hit(counter, keyKind(key));
}

// Recursive like canonicalJson: callers parse with the 64-level depth limit (lib/packet/validate.ts).
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
  for (const name of Object.keys(record)) {
    const item = record[name];
    const next = walk(item, name, counter);
    if (next !== item) changed.set(name, next);
  }
  if (!changed.size) return value;
  // Own properties defined one by one: a `__proto__` key stays a key and sets no prototype.
  const copy: Record<string, unknown> = {};
  for (const name of Object.keys(record)) {
    Object.defineProperty(copy, name, { value: changed.has(name) ? changed.get(name) : record[name], enumerable: true, writable: true, configurable: true });
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
