import "server-only";
import type { z } from "zod";
import { assertSameOrigin, requirePerson } from "../auth/person";
import type { Person, Role } from "../auth/roles";
import { authoriseRead, type Reader } from "../auth/read-access";
import { authenticateBearer, type AuthenticatedToken, type TokenScope } from "../auth/tokens";
import { BatonError, type ErrorCode } from "../core/errors";
import { parseInput } from "../core/parse-input";
import { readJsonBody } from "./body";
import { computeEtag, conditionalJsonResponse, etagMatches } from "./etag";
import { assertAllowedHost } from "./host-check";
import { parseQuery } from "./query";
import { admitTokenRequest } from "./rate-limit";
import { errorResponse, jsonResponse } from "./respond";

/**
 * THE way an HTTP handler is declared (docs/decisions/031-route-definitions.md):
 * each route.ts exports `defineRoute({...})` per method, and that one
 * definition is what runs, what is checked and what docs/api.md says
 * (`npm run docs:api`).
 */

export const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** Who may call a route. */
export type RouteAuth =
  /** Anyone; `fromPages` also requires the request to come from Baton's own pages (Origin, lib/auth/person.ts). */
  | { kind: "public"; fromPages?: boolean }
  /** An API token with `scope`, rate-limited (lib/http/rate-limit.ts). */
  | { kind: "token"; scope: TokenScope }
  /** A token with packets:read (rate-limited) or a signed-in person of any role (lib/auth/read-access.ts). */
  | { kind: "reader" }
  /** A signed-in person with at least `role`, from Baton's own pages; never a token (lib/auth/person.ts). */
  | { kind: "person"; role: Role };

type CallerOf<A extends RouteAuth> = A extends { kind: "token" }
  ? { token: AuthenticatedToken }
  : A extends { kind: "reader" }
    ? { reader: Reader }
    : A extends { kind: "person" }
      ? { person: Person }
      : unknown;

/** What a route answers when it succeeds. Errors are always the one error body (lib/http/respond.ts). */
export type RouteResponse =
  /**
   * JSON checked against `schema` (see `checkResponses`); `status`: every success status `reply()` may
   * choose; `conditional` or `etag` revalidate with 304 (docs/decisions/031-route-definitions.md).
   */
  | {
      kind: "json";
      schema: z.ZodType;
      status: number | readonly number[];
      conditional?: boolean;
      etag?: (context: { request: Request; query: unknown; reader?: Reader; person?: Person }) => Promise<string>;
      description?: string;
    }
  /** No body (204); the handler may add headers with `reply(null, { headers })`. */
  | { kind: "empty"; status: 204 }
  /** A body the handler builds itself as a Response with this content type: server-sent events, markdown, a file to save. */
  | { kind: "stream" | "markdown" | "download"; status: 200; contentType: string; description: string }
  /** Only errors: a path that serves nothing. */
  | { kind: "none" };

/** A JSON or empty answer with a status other than the first declared one, or with headers. */
export interface Reply<T> {
  readonly [REPLY]: true;
  readonly body: T;
  readonly status?: number;
  readonly headers?: Record<string, string>;
}
const REPLY = Symbol.for("baton.route.reply");
export function reply<T>(body: T, options: { status?: number; headers?: Record<string, string> } = {}): Reply<T> {
  return { [REPLY]: true, body, ...options };
}
function isReply(value: unknown): value is Reply<unknown> {
  return typeof value === "object" && value !== null && (value as { [REPLY]?: unknown })[REPLY] === true;
}

/** A request body the wrapper reads and parses (`name` says what it is in error messages), or one the handler reads itself. */
export type RouteBody = { schema: z.ZodType; name: string } | { raw: string };

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;
type BodyOf<B> = B extends { schema: infer S extends z.ZodType } ? z.output<S> : undefined;
type HandlerResult<R extends RouteResponse> = R extends { kind: "json"; schema: infer S extends z.ZodType }
  ? z.input<S> | Reply<z.input<S>>
  : R extends { kind: "empty" }
    ? Reply<null>
    : R extends { kind: "none" }
      ? never
      : Response;

export type RouteContext<A extends RouteAuth, P, Q, B> = {
  request: Request;
  params: Parsed<P>;
  query: Parsed<Q>;
  body: BodyOf<B>;
} & CallerOf<A>;

export interface RouteDefinition<
  A extends RouteAuth = RouteAuth,
  P extends z.ZodType | undefined = z.ZodType | undefined,
  Q extends z.ZodType | undefined = z.ZodType | undefined,
  B extends RouteBody | undefined = RouteBody | undefined,
  R extends RouteResponse = RouteResponse,
> {
  method: HttpMethod;
  /** As documented: `{name}` for a path parameter, `{...name}` for a catch-all. */
  path: string;
  /** One line for docs/api.md. */
  summary: string;
  auth: A;
  /** True only for /api/v1/health, which load balancers probe by address (decision 030). */
  anyHost?: boolean;
  params?: P;
  query?: Q;
  /** Request headers the route reads, for the docs: name -> what it means. */
  headers?: Record<string, string>;
  body?: B;
  response: R;
  /** Error codes the handler itself may answer, beyond those its auth, input and body bring (docs only). */
  errors?: readonly ErrorCode[];
  handler: (context: RouteContext<A, P, Q, B>) => Promise<HandlerResult<R>> | HandlerResult<R>;
}

type Segment = { params: Promise<Record<string, string | string[]>> };
/** What a route without path parameters gets (tests call such handlers with the request alone). */
const NO_SEGMENT: Segment = { params: Promise.resolve({}) };

/** The function Next calls, carrying its definition for the docs and the tests. */
export type DefinedRoute = ((request: Request, segment?: Segment) => Promise<Response>) & { route: RouteDefinition };

/**
 * Whether JSON answers are checked against their schema: in development and
 * tests, not in production, where the check costs about 6 % of the biggest
 * answer's time (the board of 1,000 threads; docs/decisions/031-route-definitions.md).
 */
let checkingResponses = process.env.NODE_ENV !== "production";
export function checkResponses(on: boolean): void {
  checkingResponses = on;
}

async function authenticate(auth: RouteAuth, request: Request): Promise<Record<string, unknown>> {
  switch (auth.kind) {
    case "public":
      if (auth.fromPages) assertSameOrigin(request);
      return {};
    case "token": {
      const token = await authenticateBearer(request.headers.get("authorization"), auth.scope);
      admitTokenRequest(token);
      return { token };
    }
    case "reader":
      return { reader: await authoriseRead(request) };
    case "person":
      return { person: await requirePerson(request, auth.role) };
  }
}

/** A handler's answer that breaks its declared shape is Baton's bug: a logged 500 naming the fields, never the values. */
function assertDeclared(definition: RouteDefinition, schema: z.ZodType, body: unknown): void {
  if (!checkingResponses) return;
  const result = schema.safeParse(body);
  if (result.success) return;
  const fields = result.error.issues.map((issue) => ({ field: issue.path.join(".") || "(body)", problem: issue.message }));
  console.error(`baton: ${definition.method} ${definition.path} answered outside its schema`, fields);
  throw new BatonError("internal", `Baton's answer to ${definition.method} ${definition.path} broke its declared shape; it was logged on the server.`, { fields });
}

function declaredStatuses(response: { status: number | readonly number[] }): readonly number[] {
  return typeof response.status === "number" ? [response.status] : response.status;
}

function toResponse(definition: RouteDefinition, request: Request, result: unknown): Response {
  const declared = definition.response;
  if (declared.kind === "none") throw new BatonError("internal", `${definition.method} ${definition.path} answers only errors.`);
  if (declared.kind === "empty") {
    const headers = isReply(result) ? result.headers : undefined;
    return new Response(null, { status: declared.status, headers: { "cache-control": "no-store", ...headers } });
  }
  if (declared.kind !== "json") {
    const type = result instanceof Response ? (result.headers.get("content-type") ?? "") : "";
    // A refusal the handler answered itself (the stream's own checks) is the error body, not the declared kind.
    if (result instanceof Response && (type.startsWith(declared.contentType) || result.status >= 400)) return result;
    throw new BatonError("internal", `${definition.method} ${definition.path} answered something other than ${declared.contentType}.`);
  }
  const statuses = declaredStatuses(declared);
  const { body, status = statuses[0] ?? 200, headers = {} } = isReply(result) ? result : { body: result };
  const notModified = declared.conditional === true && status === 304;
  if (!notModified && !statuses.includes(status)) {
    throw new BatonError("internal", `${definition.method} ${definition.path} answered ${status}, which it does not declare.`);
  }
  // The handler's own value is serialised, not zod's copy of it: a check must not change the bytes.
  assertDeclared(definition, declared.schema, body);
  if (notModified) {
    return new Response(null, { status: 304, headers: { ...headers, etag: computeEtag(JSON.stringify(body)), "cache-control": "no-cache" } });
  }
  if (declared.conditional) return conditionalJsonResponse(request, body, headers);
  return jsonResponse(body, status, headers);
}

/**
 * Declares a route: host check, auth, rate limit, path/query/body parsing, then the handler and the
 * answer check, in that order, any error as the one error body (docs/decisions/031-route-definitions.md).
 */
export function defineRoute<
  const A extends RouteAuth,
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends RouteBody | undefined = undefined,
  const R extends RouteResponse = RouteResponse,
>(definition: RouteDefinition<A, P, Q, B, R>): DefinedRoute {
  const route = definition as unknown as RouteDefinition;
  const handle = async (request: Request, segment: Segment = NO_SEGMENT): Promise<Response> => {
    try {
      if (!route.anyHost) assertAllowedHost(request);
      const caller = await authenticate(route.auth, request);
      const params = route.params ? parseInput(route.params, await segment.params, "path") : undefined;
      const query = route.query ? parseQuery(request, route.query) : undefined;
      const body = route.body && "schema" in route.body ? await readJsonBody(request, route.body.schema, route.body.name) : undefined;
      const context = { request, params, query, body, ...caller } as never;
      const declared = route.response;
      const etag = declared.kind === "json" && declared.etag ? await declared.etag(context) : null;
      if (etag && etagMatches(request.headers.get("if-none-match"), etag)) {
        return new Response(null, { status: 304, headers: { etag, "cache-control": "no-cache" } });
      }
      const response = toResponse(route, request, await route.handler(context));
      if (etag && response.status === 200) {
        response.headers.set("etag", etag);
        response.headers.set("cache-control", "no-cache");
      }
      return response;
    } catch (error) {
      return errorResponse(error);
    }
  };
  return Object.assign(handle, { route });
}

/** The definition behind an exported handler, or null when it was not made by defineRoute. */
export function routeOf(exported: unknown): RouteDefinition | null {
  if (typeof exported !== "function") return null;
  const route = (exported as Partial<DefinedRoute>).route;
  return route && typeof route === "object" && typeof route.handler === "function" ? route : null;
}
