import { z } from "zod";
import { ciChangeSchema, pullRequestChangeSchema, reviewChangeSchema, type CodeHostChange, type ThreadWorkDto } from "./dto";

/**
 * A thread's work as the code host last reported it, kept per part (ThreadWork's JSON columns),
 * and what the card shows of it. Deliveries may arrive out of order: an older report never
 * replaces a newer one.
 */

/** Checks and reviewers kept per thread: a repository runs a handful; the bound keeps a row small. */
export const KEPT_PER_PART = 30;

const at = { at: z.string() };
export const storedPullRequestSchema = pullRequestChangeSchema.extend(at);
export const storedCiSchema = z.object({ sha: z.string().nullable(), checks: z.array(ciChangeSchema.omit({ sha: true }).extend(at)) });
export const storedReviewSchema = z.object({ reviews: z.array(reviewChangeSchema.extend(at)) });

export interface StoredWork {
  pullRequest: z.infer<typeof storedPullRequestSchema> | null;
  ci: z.infer<typeof storedCiSchema> | null;
  review: z.infer<typeof storedReviewSchema> | null;
}

const newest = <T extends { at: string }>(items: T[]) => [...items].sort((a, b) => b.at.localeCompare(a.at));

/** The thread's work after `change`, or null when the change is older than what is kept (nothing to write). */
export function applyChange(work: StoredWork, change: CodeHostChange): StoredWork | null {
  switch (change.event) {
    case "pull_request":
      if (work.pullRequest && work.pullRequest.at > change.at) return null;
      return { ...work, pullRequest: { ...change.pull_request, at: change.at } };
    case "ci": {
      const { sha, ...check } = change.ci;
      const entry = { ...check, at: change.at };
      const kept = work.ci;
      if (kept && sha && kept.sha && sha !== kept.sha) {
        // Another commit: its results replace the old commit's, unless this report is older than them.
        if (kept.checks.some((old) => old.at > change.at)) return null;
        return { ...work, ci: { sha, checks: [entry] } };
      }
      const same = kept?.checks.find((old) => old.name === check.name);
      if (same && same.at > change.at) return null;
      const others = (kept?.checks ?? []).filter((old) => old.name !== check.name);
      return { ...work, ci: { sha: sha ?? kept?.sha ?? null, checks: newest([entry, ...others]).slice(0, KEPT_PER_PART) } };
    }
    case "review": {
      const review = change.review;
      // A comment alone does not change what a reviewer decided.
      if (review.state === "commented") return null;
      const kept = work.review?.reviews ?? [];
      const same = kept.find((old) => old.reviewer === review.reviewer);
      if (same && same.at > change.at) return null;
      const others = kept.filter((old) => old.reviewer !== review.reviewer);
      const reviews = review.state === "dismissed" ? others : newest([{ ...review, at: change.at }, ...others]).slice(0, KEPT_PER_PART);
      return { ...work, review: { reviews } };
    }
  }
}

/** What the card shows: CI failing if any check fails, running if any runs; the review that asks for changes first. */
export function toThreadWork(work: StoredWork): ThreadWorkDto | null {
  const checks = work.ci?.checks ?? [];
  const failing = checks.find((check) => check.state === "failing");
  const running = checks.find((check) => check.state === "running");
  const shown = failing ?? running ?? checks[0];
  const reviews = work.review?.reviews ?? [];
  const review = reviews.find((item) => item.state === "changes_requested") ?? reviews.find((item) => item.state === "approved");
  const result: ThreadWorkDto = {
    pull_request: work.pullRequest,
    ci: shown
      ? {
          state: failing ? "failing" : running ? "running" : "passing",
          check: failing ? failing.failing ?? failing.name : running ? running.name : null,
          url: failing || running ? shown.url : null,
          checks: checks.length,
          at: newest(checks)[0]!.at,
        }
      : null,
    review: review ? { state: review.state as "approved" | "changes_requested", reviewer: review.reviewer, comment: review.comment, url: review.url, at: review.at } : null,
  };
  return result.pull_request || result.ci || result.review ? result : null;
}
