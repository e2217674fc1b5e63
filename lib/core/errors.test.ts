import { describe, expect, it, vi } from "vitest";
import { BatonError } from "./errors";
import { errorResponse } from "../http/respond";

/**
 * Next bundles lib/ more than once (the server's instrumentation, each route), and the
 * ingest writer's queue is shared between the copies: a busy-database error thrown by
 * one copy must still be a 503 where another copy answers the request, not a 500.
 */
describe("BatonError across copies of its module", () => {
  it("is recognised by instanceof and answered with its own status", async () => {
    vi.resetModules();
    const other = await import("./errors");
    expect(other.BatonError).not.toBe(BatonError);
    const error = new other.BatonError("unavailable", "The database is busy; retry shortly.", null, 1);
    expect(error instanceof BatonError).toBe(true);
    const response = errorResponse(error);
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
  });

  it("is not claimed by other errors", () => {
    expect(new Error("plain") instanceof BatonError).toBe(false);
    expect({ code: "unavailable" } instanceof BatonError).toBe(false);
    const nothing: unknown = null;
    expect(nothing instanceof BatonError).toBe(false);
    expect(new BatonError("conflict", "moved on") instanceof Error).toBe(true);
  });
});
