import { readFileSync } from "node:fs";
import { createHmac, randomUUID } from "node:crypto";

/** Code host deliveries for tests: the fixtures in testing/fixtures/integrations/, moved to a repository, branch and time. */

const FIXTURES = new URL("./fixtures/integrations/", import.meta.url);
/** The time the fixtures are written around: their timestamps are shifted by (at - this). */
export const FIXTURE_EPOCH_MS = Date.UTC(2026, 11, 1, 10, 0, 0);
const FIXTURE_REPOSITORY = "acme/app";
const FIXTURE_BRANCH = "feat/x";

const ISO = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})Z$/;
const GITLAB = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) UTC$/;

function moved(value: unknown, shiftMs: number, repository: string, branch: string): unknown {
  if (Array.isArray(value)) return value.map((item) => moved(item, shiftMs, repository, branch));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, moved(item, shiftMs, repository, branch)]));
  }
  if (typeof value !== "string") return value;
  if (value === FIXTURE_REPOSITORY) return repository;
  if (value === FIXTURE_BRANCH) return branch;
  const iso = ISO.exec(value);
  if (iso) return new Date(Date.parse(value) + shiftMs).toISOString().replace(/\.\d{3}Z$/, "Z");
  const gitlab = GITLAB.exec(value);
  if (gitlab) return new Date(Date.parse(`${gitlab[1]}T${gitlab[2]}Z`) + shiftMs).toISOString().replace("T", " ").replace(/\.\d{3}Z$/, " UTC");
  return value;
}

export interface FixtureOptions {
  repository?: string;
  branch?: string;
  /** Where the fixture's 10:00 lands (default: the fixture's own time). */
  atMs?: number;
}

/** `name` is "github/check_run.failed" or "gitlab/pipeline.failed". */
export function integrationFixture(name: string, options: FixtureOptions = {}): Record<string, unknown> {
  const payload = JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), "utf8")) as unknown;
  const shift = options.atMs === undefined ? 0 : options.atMs - FIXTURE_EPOCH_MS;
  return moved(payload, shift, options.repository ?? FIXTURE_REPOSITORY, options.branch ?? FIXTURE_BRANCH) as Record<string, unknown>;
}

/** The headers GitHub sends with a delivery, signed with `secret` (a wrong secret makes a refused one). */
export function githubHeaders(secret: string, event: string, body: string, deliveryId: string = randomUUID()): Record<string, string> {
  return {
    "content-type": "application/json",
    "x-github-event": event,
    "x-github-delivery": deliveryId,
    "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
  };
}

/** The headers GitLab sends with a delivery. */
export function gitlabHeaders(secret: string, event: string, deliveryId: string = randomUUID()): Record<string, string> {
  return { "content-type": "application/json", "x-gitlab-event": event, "x-gitlab-token": secret, "x-gitlab-event-uuid": deliveryId };
}
