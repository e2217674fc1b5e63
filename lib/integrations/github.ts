import { z } from "zod";
import { parseInput } from "../core/parse-input";
import type { CodeHostChange, CiState } from "./dto";
import { firstHostTime } from "./host-time";

/**
 * GitHub's webhook payloads (pull_request, check_run, check_suite, pull_request_review),
 * read for what the card shows; every other event is ignored. Only the fields read are named.
 */

const repository = z.looseObject({ full_name: z.string() });
const nullableText = z.string().nullish();

const pullRequestPayload = z.looseObject({
  repository,
  pull_request: z.looseObject({
    html_url: nullableText,
    number: z.number().int(),
    state: z.string(),
    draft: z.boolean().nullish(),
    merged: z.boolean().nullish(),
    merged_at: nullableText,
    title: nullableText,
    updated_at: nullableText,
    head: z.looseObject({ ref: z.string() }),
  }),
});

const checkRunPayload = z.looseObject({
  repository,
  check_run: z.looseObject({
    name: z.string(),
    status: z.string(),
    conclusion: nullableText,
    html_url: nullableText,
    head_sha: nullableText,
    started_at: nullableText,
    completed_at: nullableText,
    check_suite: z.looseObject({ head_branch: nullableText }).nullish(),
  }),
});

const checkSuitePayload = z.looseObject({
  repository,
  check_suite: z.looseObject({
    head_branch: nullableText,
    head_sha: nullableText,
    status: nullableText,
    conclusion: nullableText,
    updated_at: nullableText,
    app: z.looseObject({ name: z.string() }).nullish(),
  }),
});

const reviewPayload = z.looseObject({
  repository,
  review: z.looseObject({
    state: z.string(),
    body: nullableText,
    html_url: nullableText,
    submitted_at: nullableText,
    user: z.looseObject({ login: z.string() }).nullish(),
  }),
  pull_request: z.looseObject({ head: z.looseObject({ ref: z.string() }) }),
});

const PASSING_CONCLUSIONS = new Set(["success", "neutral", "skipped"]);

function ciState(status: string | null | undefined, conclusion: string | null | undefined): CiState {
  if (status !== "completed") return "running";
  return PASSING_CONCLUSIONS.has(conclusion ?? "") ? "passing" : "failing";
}

/** The change a GitHub delivery reports, or null for an event (or a check without a branch) the card does not show. */
export function readGithubDelivery(event: string, payload: unknown, receivedAt: string): CodeHostChange | null {
  switch (event) {
    case "pull_request": {
      const { repository, pull_request: pr } = parseInput(pullRequestPayload, payload, "GitHub pull_request payload");
      const state = pr.merged === true || pr.merged_at ? "merged" : pr.state === "closed" ? "closed" : pr.draft ? "draft" : "open";
      return {
        event: "pull_request",
        repository: repository.full_name,
        branch: pr.head.ref,
        at: firstHostTime(pr.updated_at) ?? receivedAt,
        pull_request: { url: pr.html_url ?? null, number: pr.number, state, title: pr.title ?? null },
      };
    }
    case "check_run": {
      const { repository, check_run: run } = parseInput(checkRunPayload, payload, "GitHub check_run payload");
      const branch = run.check_suite?.head_branch;
      if (!branch) return null;
      const state = ciState(run.status, run.conclusion);
      return {
        event: "ci",
        repository: repository.full_name,
        branch,
        at: firstHostTime(run.completed_at, run.started_at) ?? receivedAt,
        ci: { name: run.name, state, failing: state === "failing" ? run.name : null, url: run.html_url ?? null, sha: run.head_sha ?? null },
      };
    }
    case "check_suite": {
      const { repository, check_suite: suite } = parseInput(checkSuitePayload, payload, "GitHub check_suite payload");
      if (!suite.head_branch) return null;
      const name = suite.app?.name ?? "check suite";
      const state = ciState(suite.status, suite.conclusion);
      return {
        event: "ci",
        repository: repository.full_name,
        branch: suite.head_branch,
        at: firstHostTime(suite.updated_at) ?? receivedAt,
        ci: { name, state, failing: state === "failing" ? name : null, url: null, sha: suite.head_sha ?? null },
      };
    }
    case "pull_request_review": {
      const { repository, review, pull_request: pr } = parseInput(reviewPayload, payload, "GitHub pull_request_review payload");
      const word = review.state.toLowerCase();
      const state = word === "approved" || word === "changes_requested" || word === "dismissed" ? word : "commented";
      return {
        event: "review",
        repository: repository.full_name,
        branch: pr.head.ref,
        at: firstHostTime(review.submitted_at) ?? receivedAt,
        review: { reviewer: review.user?.login ?? "someone", state, comment: review.body?.trim() || null, url: review.html_url ?? null },
      };
    }
    default:
      return null;
  }
}
