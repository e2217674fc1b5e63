import { readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ERROR_STATUS, type ErrorCode } from "../lib/core/errors";
import { HTTP_METHODS, routeOf, type RouteDefinition } from "../lib/http/route";
import { inlineCode, schemaSection, tableCell } from "./schema-tables";

// `npm run docs:api`: writes docs/api.md from the route definitions and their zod schemas, importing the
// route files (no server); scripts/api-docs.test.ts fails when it is stale (docs/decisions/031-route-definitions.md).

const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const API_DOCS_FILE = path.join(ROOT, "docs", "api.md");

/** Every app/**\/route.ts, relative to the repository, sorted. */
export function routeFiles(): string[] {
  return readdirSync(path.join(ROOT, "app"), { recursive: true, encoding: "utf8" })
    .filter((file) => path.basename(file) === "route.ts")
    .map((file) => path.posix.join("app", file.split(path.sep).join("/")))
    .sort();
}

/** The path a route file serves, written as definitions write it: `[key]` is `{key}`, `[...path]` is `{...path}`. */
export function servedPath(file: string): string {
  const segments = path.posix.dirname(file).split("/").slice(1);
  return `/${segments.map((segment) => segment.replace(/^\[(\.\.\.)?(.+)\]$/, "{$1$2}")).join("/")}`;
}

export interface ExportedHandler {
  file: string;
  name: string;
  route: RouteDefinition | null;
}

/** What each route file exports; `route` is null for an export that defineRoute did not make. */
export async function exportedHandlers(): Promise<ExportedHandler[]> {
  const found: ExportedHandler[] = [];
  for (const file of routeFiles()) {
    const exports = (await import(pathToFileURL(path.join(ROOT, file)).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(exports)) found.push({ file, name, route: routeOf(value) });
  }
  return found;
}

export function describeAuth(route: RouteDefinition): string {
  const { auth } = route;
  switch (auth.kind) {
    case "public":
      return auth.fromPages ? "public, from Baton's own pages (`Origin` must be this Baton)" : "public";
    case "token":
      return `API token with the scope ${inlineCode(auth.scope)} (\`Authorization: Bearer <token>\`; rate-limited)`;
    case "reader":
      return "reader: an API token with `packets:read` (rate-limited) or a signed-in person of any role";
    case "person":
      return `signed-in person with the role ${inlineCode(auth.role)} or above, from Baton's own pages; never a token`;
  }
}

/** The errors a route may answer: from its host check, auth, input and body, and the ones it declares. */
export function errorsOf(route: RouteDefinition): ErrorCode[] {
  const codes = new Set<ErrorCode>();
  if (!route.anyHost) codes.add("misdirected_request");
  if (route.auth.kind === "public" && route.auth.fromPages) codes.add("forbidden");
  if (route.auth.kind === "token" || route.auth.kind === "reader") ["unauthenticated", "forbidden", "rate_limited"].forEach((c) => codes.add(c as ErrorCode));
  if (route.auth.kind === "person") ["unauthenticated", "forbidden"].forEach((c) => codes.add(c as ErrorCode));
  if (route.params || route.query) codes.add("invalid_request");
  if (route.body && "schema" in route.body) {
    ["invalid_request", "invalid_json", "invalid_encoding", "unsupported_media_type", "payload_too_large", "request_timeout"].forEach((c) => codes.add(c as ErrorCode));
  }
  for (const declared of route.errors ?? []) codes.add(declared);
  return [...codes].sort((a, b) => ERROR_STATUS[a] - ERROR_STATUS[b] || a.localeCompare(b));
}

function responseSection(route: RouteDefinition): string[] {
  const { response } = route;
  switch (response.kind) {
    case "none":
      return ["Only errors."];
    case "empty":
      return [`${inlineCode(String(response.status))}, no body.`];
    case "stream":
    case "markdown":
    case "download":
      return [`${inlineCode(String(response.status))} ${inlineCode(response.contentType)}: ${response.description}.`];
    case "json": {
      const statuses = (typeof response.status === "number" ? [response.status] : response.status).map((status) => inlineCode(String(status))).join(", ");
      const lead = `${statuses} JSON${response.description ? `: ${response.description}` : ""}.`;
      return [lead, "", ...schemaSection(response.schema, "output", false)];
    }
  }
}

function endpointSection(route: RouteDefinition): string[] {
  const lines = [`### ${route.method} ${route.path}`, "", route.summary, "", `- **Auth**: ${describeAuth(route)}`];
  if (route.anyHost) lines.push("- **Host**: any (skips `BATON_ALLOWED_HOSTS`)");
  lines.push("");
  if (route.params) lines.push("**Path parameters** (URL-encoded)", "", ...schemaSection(route.params, "input", true));
  if (route.query) lines.push("**Query parameters**", "", ...schemaSection(route.query, "input", true));
  if (route.headers) {
    lines.push("**Request headers**", "", "| header | meaning |", "|---|---|");
    for (const [name, meaning] of Object.entries(route.headers)) lines.push(`| ${inlineCode(name)} | ${tableCell(meaning)} |`);
    lines.push("");
  }
  if (route.body) {
    if ("schema" in route.body) lines.push("**Body** (`application/json`)", "", ...schemaSection(route.body.schema, "input", true));
    else lines.push("**Body** (`application/json`)", "", `${route.body.raw}.`, "");
  }
  lines.push("**Answer**", "", ...responseSection(route));
  if (lines.at(-1) !== "") lines.push("");
  lines.push(`**Errors**: ${errorsOf(route).map((error) => inlineCode(`${ERROR_STATUS[error]} ${error}`)).join(", ")}.`, "");
  return lines;
}

const METHOD_ORDER = new Map(HTTP_METHODS.map((method, index) => [method, index]));

/** The routes to document: one per path and method, sorted by path, then method. */
export async function documentedRoutes(): Promise<RouteDefinition[]> {
  const routes = (await exportedHandlers()).flatMap((handler) => (handler.route ? [handler.route] : []));
  return routes.sort((a, b) => a.path.localeCompare(b.path) || METHOD_ORDER.get(a.method)! - METHOD_ORDER.get(b.method)!);
}

/** The whole of docs/api.md. */
export async function renderApiDocs(): Promise<string> {
  const routes = await documentedRoutes();
  const lines = [
    "# API endpoints",
    "",
    "<!-- Generated by `npm run docs:api` from the route definitions (app/**/route.ts, lib/http/route.ts); do not edit. -->",
    "",
    "Every endpoint, as its route definition declares it; parameters, bodies and answers are",
    "generated from the zod schemas the server parses them with. How to use the API (tokens,",
    "rate limits, sign-in throttling, waits and streams) is the hand-written",
    "[API guide](http-api.md).",
    "",
    "Every error answer has the body `{\"error\": {\"code\", \"message\", \"details\"}}`; a `400 invalid_request`",
    "names each bad field in `details.fields` (`[{field, problem}]`). Any endpoint may also answer",
    "`500 internal` (logged on the server) and `503 unavailable` (the database could not be reached; retry).",
    "",
    "| method | path | auth | summary |",
    "|---|---|---|---|",
    ...routes.map((route) => `| ${route.method} | [${inlineCode(route.path)}](#${anchorOf(route)}) | ${route.auth.kind}${authDetail(route)} | ${tableCell(route.summary)} |`),
    "",
    "## Endpoints",
    "",
    ...routes.flatMap(endpointSection),
  ];
  return `${lines.join("\n").trimEnd()}\n`;
}

function authDetail(route: RouteDefinition): string {
  const { auth } = route;
  if (auth.kind === "token") return ` ${inlineCode(auth.scope)}`;
  if (auth.kind === "person") return ` ${inlineCode(auth.role)}`;
  return "";
}

/** GitHub's heading anchor of `### METHOD /path`. */
function anchorOf(route: RouteDefinition): string {
  return `${route.method} ${route.path}`
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, "")
    .replace(/ /g, "-");
}

// Run as a script (tsx scripts/api-docs.ts), not when the test imports it.
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  writeFileSync(API_DOCS_FILE, await renderApiDocs());
  console.log(`wrote ${path.relative(process.cwd(), API_DOCS_FILE)}`);
}
