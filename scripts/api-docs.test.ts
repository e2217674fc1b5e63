import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { API_DOCS_FILE, exportedHandlers, renderApiDocs, routeFiles, servedPath } from "./api-docs";

// docs/api.md is generated from the route definitions; a route or schema change that
// is not regenerated fails here, with the command that puts it right. And every
// handler a route file exports must be a definition, or the docs would miss it.

describe("docs/api.md", () => {
  it("is what the route definitions generate now (else run `npm run docs:api`)", async () => {
    expect(readFileSync(API_DOCS_FILE, "utf8")).toBe(await renderApiDocs());
  }, 60_000);
});

describe("route files", () => {
  it("export only handlers made by defineRoute, each for its own method and its file's path", async () => {
    const handlers = await exportedHandlers();
    expect(new Set(handlers.map((handler) => handler.file))).toEqual(new Set(routeFiles()));
    const found = handlers.map(({ file, name, route }) => ({ file, name, method: route?.method ?? "not a defined route", path: route?.path ?? null }));
    expect(found).toEqual(handlers.map(({ file, name }) => ({ file, name, method: name, path: servedPath(file) })));
  }, 60_000);

  it("write paths as the definitions do", () => {
    expect(servedPath("app/api/v1/threads/[key]/handoff/route.ts")).toBe("/api/v1/threads/{key}/handoff");
    expect(servedPath("app/api/[...path]/route.ts")).toBe("/api/{...path}");
    expect(servedPath("app/threads/[key]/handoff.json/route.ts")).toBe("/threads/{key}/handoff.json");
  });
});
