// The catalogue of secrets redaction recognises, applied by ./secrets.ts. Every pattern must stay
// idempotent and linear, as docs/decisions/020-secret-redaction.md (item 4) says; the kinds and
// their corpus: docs/decisions/035-redaction-corpus-and-rule-set.md.
import { minMatchLength } from "./min-match-length";

export const placeholder = (kind: string) => `[redacted:${kind}]`;
/** The placeholder's own shape, for tests and for readers of redacted packets. */
export const PLACEHOLDER_PATTERN = /\[redacted:[a-z0-9-]+\]/g;

export interface Counter {
  count: number;
  kinds: Set<string>;
}

/** Counts one secret of `kind` and gives the placeholder that replaces it. */
export const redactedAs = (counter: Counter, kind: string): string => {
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
export interface Pattern {
  kind: string;
  regex: RegExp;
  replace?: Replacer;
  /**
   * Every match contains one of these (in lower case when the regex ignores case): a string
   * with none is not scanned in vain (decision 020, item 9: the scans were a fifth of ingest's
   * CPU). `secrets.test.ts` checks them against every match in the corpus and fuzzed text.
   */
  needs?: readonly string[];
  /** The fewest characters a match takes (from the regex, minMatchLength): most of a packet's strings are shorter. */
  minLength?: number;
}

/** A variable, a placeholder, a mask or an earlier redaction: not a secret itself. */
const isReference = (value: string) => /^(?:[$%{<*]|\[redacted:)/.test(value);

// Token patterns start only where the previous character could not be part of the token.
const TOKEN_START = "(?<![A-Za-z0-9_-])";

/** Applied in this order, after the private key blocks (redactPrivateKeyBlocks). */
const PATTERNS: readonly Pattern[] = [
  { kind: "aws-access-key-id", regex: /(?<![A-Za-z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])/g, needs: ["AKIA", "ASIA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "ABIA", "ACCA"] },
  {
    kind: "aws-secret-access-key",
    regex: /((?:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key)["']?\s{0,4}[=:]\s{0,4}["']?)([A-Za-z0-9/+]{40,})/gi,
    needs: ["secret"],
    replace: (counter, _match, prefix) => `${prefix}${redactedAs(counter, "aws-secret-access-key")}`,
  },
  { kind: "github-token", regex: new RegExp(`${TOKEN_START}gh[pousr]_[A-Za-z0-9]{36,}`, "g"), needs: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"] },
  { kind: "github-token", regex: new RegExp(`${TOKEN_START}github_pat_[A-Za-z0-9_]{22,}`, "g"), needs: ["github_pat_"] },
  { kind: "slack-token", regex: new RegExp(`${TOKEN_START}(?:xox[abprse](?:\\.xox[abprs])?|xapp)-[A-Za-z0-9-]{10,}`, "g"), needs: ["xox", "xapp-"] },
  { kind: "gitlab-token", regex: new RegExp(`${TOKEN_START}gl(?:pat|dt|rt|ptt|cbt|oas)-[A-Za-z0-9_-]{20,}`, "g"), needs: ["glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-"] },
  { kind: "npm-token", regex: new RegExp(`${TOKEN_START}npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])`, "g"), needs: ["npm_"] },
  { kind: "huggingface-token", regex: new RegExp(`${TOKEN_START}hf_[A-Za-z]{34}(?![A-Za-z0-9])`, "g"), needs: ["hf_"] },
  { kind: "sendgrid-key", regex: new RegExp(`${TOKEN_START}SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])`, "g"), needs: ["SG."] },
  { kind: "twilio-key", regex: new RegExp(`${TOKEN_START}SK[0-9a-f]{32}(?![A-Za-z0-9])`, "g"), needs: ["SK"] },
  { kind: "digitalocean-token", regex: new RegExp(`${TOKEN_START}do[opr]_v1_[0-9a-f]{64}(?![A-Za-z0-9])`, "g"), needs: ["_v1_"] },
  // Providers with a recognisable prefix (docs/decisions/035-redaction-corpus-and-rule-set.md).
  { kind: "shopify-token", regex: new RegExp(`${TOKEN_START}shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9])`, "g"), needs: ["shpat_", "shpca_", "shppa_", "shpss_"] },
  { kind: "mailgun-key", regex: new RegExp(`${TOKEN_START}key-[0-9a-f]{32}(?![A-Za-z0-9])`, "g"), needs: ["key-"] },
  { kind: "heroku-key", regex: new RegExp(`${TOKEN_START}HRKU-[A-Za-z0-9_-]{20,}`, "g"), needs: ["HRKU-"] },
  { kind: "pypi-token", regex: new RegExp(`${TOKEN_START}pypi-AgE[A-Za-z0-9_-]{50,}`, "g"), needs: ["pypi-AgE"] },
  { kind: "linear-key", regex: new RegExp(`${TOKEN_START}lin_(?:api|oauth)_[A-Za-z0-9]{40}(?![A-Za-z0-9])`, "g"), needs: ["lin_api_", "lin_oauth_"] },
  { kind: "grafana-token", regex: new RegExp(`${TOKEN_START}(?:glsa_[A-Za-z0-9]{32}_[0-9a-f]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})(?![A-Za-z0-9])`, "g"), needs: ["glsa_", "glc_"] },
  { kind: "databricks-token", regex: new RegExp(`${TOKEN_START}dapi[0-9a-f]{32}(?:-[0-9])?(?![A-Za-z0-9])`, "g"), needs: ["dapi"] },
  { kind: "postman-key", regex: new RegExp(`${TOKEN_START}PMAK-[0-9a-f]{24}-[0-9a-f]{34}(?![A-Za-z0-9])`, "g"), needs: ["PMAK-"] },
  { kind: "vault-token", regex: new RegExp(`${TOKEN_START}hv[sbr]\\.[A-Za-z0-9_-]{24,}`, "g"), needs: ["hvs.", "hvb.", "hvr."] },
  { kind: "doppler-token", regex: new RegExp(`${TOKEN_START}dp\\.(?:pt|st|sa|ct|scim|audit)\\.[A-Za-z0-9._-]{40,}`, "g"), needs: ["dp."] },
  { kind: "groq-key", regex: new RegExp(`${TOKEN_START}gsk_[A-Za-z0-9]{48,}`, "g"), needs: ["gsk_"] },
  { kind: "docker-token", regex: new RegExp(`${TOKEN_START}dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}`, "g"), needs: ["dckr_"] },
  { kind: "age-key", regex: new RegExp(`${TOKEN_START}AGE-SECRET-KEY-1[0-9A-Z]{58}(?![A-Za-z0-9])`, "g"), needs: ["AGE-SECRET-KEY-1"] },
  { kind: "newrelic-key", regex: new RegExp(`${TOKEN_START}NR(?:AK|AA|II)-[A-Z0-9]{27}(?![A-Za-z0-9])`, "g"), needs: ["NRAK-", "NRAA-", "NRII-"] },
  { kind: "sentry-token", regex: new RegExp(`${TOKEN_START}sntry[su]_[A-Za-z0-9+/=_-]{40,}`, "g"), needs: ["sntrys_", "sntryu_"] },
  {
    // A bot token: the bot's id in base64, a timestamp, an HMAC; random, so mixed case and a digit.
    kind: "discord-token",
    regex: new RegExp(`${TOKEN_START}[MNO][A-Za-z0-9]{23,27}\\.[A-Za-z0-9_-]{6}\\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])`, "g"),
    needs: ["."],
    replace: (counter, match) => (looksRandom(match) ? redactedAs(counter, "discord-token") : match),
  },
  {
    kind: "discord-webhook",
    regex: /(https:\/\/(?:ptb\.|canary\.)?discord(?:app)?\.com\/api\/webhooks\/[0-9]{5,30}\/)[A-Za-z0-9_-]{20,}/g,
    needs: ["/api/webhooks/"],
    replace: (counter, _match, prefix) => `${prefix}${redactedAs(counter, "discord-webhook")}`,
  },
  {
    // A bot's token: its numeric id, a colon, then 35 characters starting AA.
    kind: "telegram-token",
    regex: /((?<![0-9])[0-9]{8,10}:)AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])/g,
    needs: [":AA"],
    replace: (counter, _match, prefix) => `${prefix}${redactedAs(counter, "telegram-token")}`,
  },
  {
    // An Entra ID (Azure AD) client secret: three characters, a digit, Q~, then 31 to 34 more.
    kind: "azure-key",
    regex: /(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/g,
    needs: ["Q~"],
  },
  {
    kind: "slack-webhook",
    regex: /(https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9/_-]{8,}/g,
    needs: ["https://hooks.slack.com/"],
    replace: (counter, _match, prefix) => `${prefix}${redactedAs(counter, "slack-webhook")}`,
  },
  {
    kind: "model-provider-key",
    regex: new RegExp(`${TOKEN_START}sk-(ant-|proj-|svcacct-|admin-)?([A-Za-z0-9_-]{20,})`, "g"),
    needs: ["sk-"],
    // Mixed case for shorter bodies; a long lower-case body with digits is a key too (sk-xxxx of other providers).
    replace: (counter, match, family, body) =>
      looksRandom(body) || (body.length >= 32 && /[0-9]/.test(body) && /[a-z]/.test(body) && !body.includes("-"))
        ? redactedAs(counter, family === "ant-" ? "anthropic-key" : "openai-key")
        : match,
  },
  { kind: "google-api-key", regex: new RegExp(`${TOKEN_START}AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])`, "g"), needs: ["AIza"] },
  { kind: "stripe-key", regex: new RegExp(`${TOKEN_START}(?:(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[0-9A-Za-z]{24,})`, "g"), needs: ["_live_", "_test_", "whsec_"] },
  {
    kind: "azure-key",
    regex: /((?:AccountKey|SharedAccessKey|SharedAccessSignature)=)([A-Za-z0-9+/%=&:._-]{20,})/g,
    needs: ["AccountKey=", "SharedAccessKey=", "SharedAccessSignature="],
    replace: (counter, _match, prefix) => `${prefix}${redactedAs(counter, "azure-key")}`,
  },
  {
    // Authorization: Basic/token/Digest ... (Bearer has its own rule below).
    kind: "authorization",
    regex: /(Authorization["']?\s{0,4}[:=]\s{0,4}["']?(?:Basic|Token|token|Digest|Negotiate|ApiKey|Api-Key)\s{1,4})([A-Za-z0-9._~+/=,:-]{8,})/g,
    needs: ["Authorization"],
    replace: (counter, match, prefix, value) => (isReference(value) ? match : `${prefix}${redactedAs(counter, "authorization")}`),
  },
  {
    // curl -u user:password, curl --user user:password: the password only.
    kind: "basic-credentials",
    regex: /((?:^|\s)(?:-u|--user)\s{1,4}["']?[^\s:"'$]{1,128}:)([^\s"']{3,256})/g,
    needs: ["-u"],
    replace: (counter, match, prefix, password) => (isReference(password) ? match : `${prefix}${redactedAs(counter, "basic-credentials")}`),
  },
  { kind: "baton-token", regex: new RegExp(`${TOKEN_START}btn_[a-z0-9]{8}_[A-Za-z0-9]{32}(?![A-Za-z0-9])`, "g"), needs: ["btn_"] },
  { kind: "jwt", regex: new RegExp(`${TOKEN_START}eyJ[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{10,}`, "g"), needs: ["eyJ"] },
  {
    kind: "bearer-token",
    regex: /\b([Bb]earer\s{1,4})([A-Za-z0-9._~+/-]{20,}=*)/g,
    needs: ["earer"],
    replace: (counter, match, prefix, token) =>
      /^[^/.]/.test(token) && /[0-9]/.test(token) && /[A-Za-z]/.test(token) ? `${prefix}${redactedAs(counter, "bearer-token")}` : match,
  },
  {
    // scheme://user:password@host: the password only; user and host stay readable.
    kind: "url-password",
    regex: /([a-zA-Z][a-zA-Z0-9+.-]{0,20}:\/\/[^\s/:@"'<>[\]]{0,256}:)([^\s/@"'<>[\]]{1,256})@/g,
    needs: ["://"],
    replace: (counter, match, prefix, password) =>
      /^(?:[$%{<*]|\[redacted:)/.test(password) ? match : `${prefix}${redactedAs(counter, "url-password")}@`,
  },
  {
    // password=..., api_key: ..., GITHUB_TOKEN=..., "secret": "...": the value only, when it looks like a secret.
    kind: "assignment",
    // The name may carry a prefix (PGPASSWORD, MYSQL_PWD, clientSecret, accessToken).
    regex:
      /((?<![A-Za-z0-9_])[A-Za-z0-9_-]{0,24}?(passw(?:or)?d|passphrase|pwd|secret|token|api[_-]?key|apikey|app[_-]?key|access[_-]?key|private[_-]?key)[A-Za-z0-9_-]{0,20}["']?\s{0,4}([=:])\s{0,4}["']?)([^\s"'`,;&<>(){}[\]]{1,})/gi,
    needs: ["pass", "pwd", "secret", "token", "key"],
    replace: (counter, match, prefix, keyword, sign, value) =>
      assignedSecret(keyword, sign, value) ? `${prefix}${redactedAs(counter, assignmentKind(keyword))}` : match,
  },
  {
    // An AWS secret key without its name: 40 characters of base64 with a / or +, mixed case and digits.
    kind: "aws-secret-access-key",
    regex: /(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g,
    replace: (counter, match) => (/[/+]/.test(match) && looksRandom(match) ? redactedAs(counter, "aws-secret-access-key") : match),
  },
  {
    // A private key's body pasted without its BEGIN/END lines: three or more full base64 lines.
    kind: "private-key",
    regex: /(?<![A-Za-z0-9+/])(?:[A-Za-z0-9+/]{60,76}\r?\n){2,}[A-Za-z0-9+/]{4,76}={0,2}(?![A-Za-z0-9+/=])/g,
    needs: ["\n"],
    replace: (counter, match) => (looksRandom(match) ? redactedAs(counter, "private-key") : match),
  },
];

/** The patterns, each with the fewest characters its match takes. */
export const SECRET_PATTERNS: readonly Pattern[] = PATTERNS.map((pattern) => ({ ...pattern, minLength: minMatchLength(pattern.regex.source) }));

/**
 * Whether the value assigned to a credential's name is the credential. Passwords count at
 * any length after `=` (`password=hunter2`), after `:` when they hold more than letters;
 * other names when the value reads like a key (looksLikeSecretValue).
 */
function assignedSecret(keyword: string, sign: string, value: string): boolean {
  if (isReference(value) || value.includes("://")) return false;
  if (/^(?:passw|passphrase|pwd)/i.test(keyword)) {
    if (/^[/.~]/.test(value)) return false; // PWD=/home/me, a path
    if (sign === "=") return value.length >= 3;
    return value.length >= 3 && /[^A-Za-z]/.test(value);
  }
  return looksLikeSecretValue(value);
}

function assignmentKind(keyword: string): string {
  const word = keyword.toLowerCase();
  if (word.startsWith("pass") || word === "pwd") return "password";
  if (word === "token") return "token";
  if (word.includes("key")) return "api-key";
  return "secret";
}

const PEM_BEGIN = /-----BEGIN ([A-Z0-9 ]{0,40})PRIVATE KEY( BLOCK)?-----/g;
const PEM_END = /-----END [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----/g;

/** Private key blocks, BEGIN to END (or to the end of the text when cut off), found by forward scans only. */
export function redactPrivateKeyBlocks(text: string, counter: Counter): string {
  if (!text.includes("PRIVATE KEY")) return text;
  let out = "";
  let from = 0;
  for (;;) {
    PEM_BEGIN.lastIndex = from;
    const begin = PEM_BEGIN.exec(text);
    if (!begin) break;
    PEM_END.lastIndex = begin.index + begin[0].length;
    const end = PEM_END.exec(text);
    out += text.slice(from, begin.index) + redactedAs(counter, "private-key");
    if (!end) return out; // a key cut off: everything after its BEGIN line goes
    from = end.index + end[0].length;
  }
  return out + text.slice(from);
}
