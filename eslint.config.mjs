import nextVitals from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";

/**
 * The architecture's dependency rules, enforced by `npm run lint` (lib/lint-rules.test.ts
 * proves a forbidden import fails). Each is a regular expression over the import's text.
 */
const DATABASE = String.raw`(^|/)(db|db-[a-z]+|sql)$|/generated/|/migrate/|^@prisma/|^(pg|better-sqlite3)$`;
const HTTP = String.raw`(^|/)http/|^next($|/)`;
const UI = String.raw`^react($|-dom|/)|^@tanstack/|(^|/)components/|^@/app/|(^|/)app/`;
/** Modules that touch the database, the file system, secrets or Node-only APIs. */
const SERVER = [
  DATABASE,
  String.raw`^node:|^(fs|path|child_process|crypto|os|net|http|https|dns)$|^chokidar$|^@node-rs/`,
  String.raw`(^|/)(config|ingest/.*|watch/.*|writeback/.*|fs/.*|ledger/(events|queries|bus|consistency)|live/(ledger-feed|ledger-stream|postgresql-feed|sqlite-feed|feed-shared))$`,
  String.raw`(^|/)auth/(sessions|tokens|users|passwords|person|page-person|read-access|reader-checks)$`,
  String.raw`(^|/)http/(respond|route|body|rate-limit|session-response|query)$`,
  String.raw`(^|/)(board/board|threads/queries|risks/(queries|triage|active-risks)|timeline/(feed|lanes|queries)|lessons/(queries|backfill)|human/(actions|inbox|wait)|verdict/(read|cache|roots)|webhooks/(deliver|notifier|webhooks|start|derive|regressions|loop|targets)|watchdog/[a-z-]+)$`,
].join("|");

const LIB_UP = { regex: String.raw`(^|/)components/|^@/app/|^(\.\./)+app/`, message: "Nothing in lib/ imports app/ or components/." };
/** Flat config does not merge a rule's options: a file's last matching block names all its patterns. */
const forbid = (...patterns) => ["error", { patterns }];

const config = [
  ...nextVitals,
  ...nextTs,
  { ignores: [".next/**", ".next-*/**", "bench/results/**", "node_modules/**", "lib/generated/**", "test-results/**", "playwright-report/**", "next-env.d.ts"] },
  {
    // lib/ is below app/ and components/, never the other way. Tests may drive a route
    // handler (they test it); production code may not reach up.
    files: ["lib/**/*.ts"],
    ignores: ["**/*.test.ts", "lib/hardening/ingest-harness.ts"],
    rules: { "no-restricted-imports": forbid(LIB_UP) },
  },
  {
    // The contract (the packet schema, normalisation, thread keys, lint, redaction) is pure.
    files: ["lib/packet/**/*.ts", "lib/redact/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-imports": forbid(
        { regex: `${DATABASE}|${HTTP}|${UI}|(^|/)(ingest|ledger|watch|writeback|webhooks|board|human)/`, message: "The contract (lib/packet, lib/redact) imports no database, HTTP or UI code." },
      ),
    },
  },
  {
    // Ingest is reached by HTTP, the watcher and the CLI alike: it knows no HTTP layer.
    files: ["lib/ingest/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: { "no-restricted-imports": forbid(LIB_UP, { regex: HTTP, message: "Ingest imports no HTTP layer (lib/http, next): HTTP, the watcher and the CLI share it." }) },
  },
  {
    // What runs in the browser imports no server module (DTOs live in files of their own).
    files: ["components/**/*.{ts,tsx}", "lib/live/use-*.ts", "lib/browser/**/*.ts"],
    rules: {
      "no-restricted-imports": forbid({ regex: SERVER, message: "Components and browser hooks import no server module: use the DTO file (…/dto.ts) instead." }),
    },
  },
  {
    files: ["lib/live/use-*.ts", "lib/browser/**/*.ts"],
    rules: {
      "no-restricted-imports": forbid(LIB_UP, { regex: SERVER, message: "Components and browser hooks import no server module: use the DTO file (…/dto.ts) instead." }),
    },
  },
];
export default config;
