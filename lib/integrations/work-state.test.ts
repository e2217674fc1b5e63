import { describe, expect, it } from "vitest";
import type { CodeHostChange } from "./dto";
import { applyChange, toThreadWork, type StoredWork } from "./work-state";

const EMPTY: StoredWork = { pullRequest: null, ci: null, review: null };
const where = (minute: number) => ({ repository: "acme/app", branch: "feat/x", at: `2026-12-01T10:${String(minute).padStart(2, "0")}:00.000Z` });
const check = (minute: number, name: string, state: "passing" | "failing" | "running", sha = "a1"): CodeHostChange => ({
  event: "ci",
  ...where(minute),
  ci: { name, state, failing: state === "failing" ? name : null, url: null, sha },
});
const review = (minute: number, reviewer: string, state: "approved" | "changes_requested" | "commented" | "dismissed"): CodeHostChange => ({
  event: "review",
  ...where(minute),
  review: { reviewer, state, comment: `${reviewer} says ${state}`, url: null },
});
const apply = (changes: CodeHostChange[]) => changes.reduce<StoredWork>((work, change) => applyChange(work, change) ?? work, EMPTY);

describe("a thread's work", () => {
  it("CI fails when any check fails, runs while any runs, and a newer commit's results replace the older commit's", () => {
    expect(toThreadWork(apply([check(1, "lint", "passing"), check(2, "unit tests", "failing")]))?.ci).toMatchObject({ state: "failing", check: "unit tests", checks: 2 });
    expect(toThreadWork(apply([check(1, "lint", "running"), check(2, "unit tests", "passing")]))?.ci).toMatchObject({ state: "running", check: "lint" });
    const pushedAgain = apply([check(1, "unit tests", "failing"), check(5, "unit tests", "running", "b2")]);
    expect(toThreadWork(pushedAgain)?.ci).toMatchObject({ state: "running", checks: 1 });
  });

  it("never lets an older report replace a newer one", () => {
    const work = apply([check(5, "unit tests", "passing")]);
    expect(applyChange(work, check(3, "unit tests", "failing"))).toBeNull();
    // An older commit's late report does not reset the newer commit's checks.
    expect(applyChange(apply([check(5, "unit tests", "passing", "b2")]), check(3, "unit tests", "failing", "a1"))).toBeNull();
  });

  it("keeps each reviewer's latest decision: changes requested first; a comment changes nothing; a dismissal removes it", () => {
    expect(toThreadWork(apply([review(1, "rosa", "approved"), review(2, "li", "changes_requested")]))?.review).toMatchObject({ state: "changes_requested", reviewer: "li" });
    expect(toThreadWork(apply([review(1, "li", "changes_requested"), review(2, "li", "commented")]))?.review).toMatchObject({ state: "changes_requested" });
    expect(toThreadWork(apply([review(1, "li", "changes_requested"), review(2, "li", "approved")]))?.review).toMatchObject({ state: "approved" });
    expect(toThreadWork(apply([review(1, "li", "changes_requested"), review(2, "li", "dismissed")]))).toBeNull();
  });
});
