import nextVitals from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";

/**
 * The architecture's dependency rules, enforced by `npm run lint` (lib/lint-rules.test.ts
 * proves a forbidden import fails). Each is a regular expression over the import's text.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const DATABASE = String.raw`(^|/)db/|/generated/|^@prisma/|^(pg|better-sqlite3)$`;
const HTTP = String.raw`(^|/)http/|^next($|/)`;
const UI = String.raw`^react($|-dom|/)|^@tanstack/|(^|/)components/|^@/app/|(^|/)app/`;

/**
 * The lib/ modules marked `import "server-only"` (lib/server-only.test.ts keeps the marks
 * complete), as import patterns: the marks are the one list of what is server code.
 */
function serverOnlyModules(dir = "lib") {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "generated") found.push(...serverOnlyModules(file));
    } else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) && /^import "server-only";/m.test(readFileSync(file, "utf8"))) {
      found.push(file.slice("lib/".length).replace(/\.tsx?$/, "").replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    }
  }
  return found;
}
/** Modules that touch the database, the file system, secrets or Node-only APIs. */
const SERVER = [
  DATABASE,
  String.raw`^node:|^(fs|path|child_process|crypto|os|net|http|https|dns)$|^chokidar$|^@node-rs/|^server-only$`,
  `(^|/)(${serverOnlyModules().join("|")})$`,
].join("|");

const LIB_UP = { regex: String.raw`(^|/)components/|^@/app/|^(\.\./)+app/`, message: "Nothing in lib/ imports app/ or components/." };
/** Flat config does not merge a rule's options: a file's last matching block names all its patterns. */
const forbid = (...patterns) => ["error", { patterns }];

/**
 * React's rules (the hooks rules run React's compiler on every function) where React code
 * lives: app/, components/ and the browser hooks. Elsewhere they find nothing and cost a
 * quarter of the lint's time.
 */
const REACT_RULES_OFF = Object.fromEntries(
  nextVitals
    .flatMap((block) => Object.keys(block.rules ?? {}))
    .filter((rule) => /^react(-hooks)?\//.test(rule))
    .map((rule) => [rule, "off"]),
);

const config = [
  ...nextVitals,
  ...nextTs,
  {
    files: ["**/*.{ts,mjs,js}"],
    ignores: ["lib/browser/**", "app/**", "components/**"],
    rules: REACT_RULES_OFF,
  },
  { ignores: [".next/**", ".next-*/**", "bench/results/**", "node_modules/**", "lib/generated/**", "test-results/**", "playwright-report/**", "next-env.d.ts"] },
  {
    // lib/ is below app/ and components/, never the other way. Tests may drive a route
    // handler (they test it); production code may not reach up.
    files: ["lib/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: { "no-restricted-imports": forbid(LIB_UP) },
  },
  {
    // The contract (the packet schema, normalisation, thread keys, lint, redaction) is pure.
    files: ["lib/contract/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-imports": forbid(
        { regex: `${DATABASE}|${HTTP}|${UI}|(^|/)(ingest|events|human|notify|board|views|server)/`, message: "The contract (lib/contract) imports no database, HTTP or UI code." },
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
    files: ["components/**/*.{ts,tsx}", "lib/browser/**/*.ts"],
    rules: {
      "no-restricted-imports": forbid({ regex: SERVER, message: "Components and browser hooks import no server module: use the DTO file (…/dto.ts) instead." }),
    },
  },
  {
    files: ["lib/browser/**/*.ts"],
    rules: {
      "no-restricted-imports": forbid(LIB_UP, { regex: SERVER, message: "Components and browser hooks import no server module: use the DTO file (…/dto.ts) instead." }),
    },
  },
  {
    // Every page is rendered per request: a prefetched link is a render nobody may look at, on
    // every page load (docs/decisions/047-no-thread-prefetch.md).
    files: ["app/**/*.tsx", "components/**/*.tsx"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "JSXOpeningElement[name.name='Link']:not(:has(JSXAttribute[name.name='prefetch']))",
          message: "Set prefetch={false} on a Link: every page is rendered per request (docs/decisions/047-no-thread-prefetch.md).",
        },
      ],
    },
  },
  {
    // Sizes a reader takes in at once (issue 14): a module grows past them by splitting, not by scrolling.
    files: ["**/*.{ts,tsx,mjs}"],
    ignores: ["**/*.test.{ts,tsx}", "e2e/**", "bench/**", "**/*.d.ts"],
    rules: { "max-lines": ["error", { max: 300, skipBlankLines: false, skipComments: false }] },
  },
  {
    files: ["components/**/*.tsx"],
    rules: { "max-lines": ["error", { max: 250, skipBlankLines: false, skipComments: false }] },
  },
];
export default config;
