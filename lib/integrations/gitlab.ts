import { z } from "zod";
import { parseInput } from "../core/parse-input";
import type { CodeHostChange, CiState } from "./dto";
import { firstHostTime } from "./host-time";

/**
 * GitLab's webhook payloads (Merge Request Hook, with its approvals and reviewers' states;
 * Pipeline Hook; Note Hook on a merge request), read for what the card shows.
 */

const project = z.looseObject({ path_with_namespace: z.string() });
const nullableText = z.string().nullish();
const user = z.looseObject({ username: z.string() }).nullish();

const mergeRequestPayload = z.looseObject({
  project,
  user,
  object_attributes: z.looseObject({
    iid: z.number().int(),
    url: nullableText,
    title: nullableText,
    state: z.string(),
    action: nullableText,
    draft: z.boolean().nullish(),
    work_in_progress: z.boolean().nullish(),
    source_branch: z.string(),
    updated_at: nullableText,
  }),
  reviewers: z.array(z.looseObject({ username: z.string(), state: nullableText })).nullish(),
});

const pipelinePayload = z.looseObject({
  project,
  object_attributes: z.looseObject({
    id: z.number().int(),
    ref: z.string(),
    tag: z.boolean().nullish(),
    sha: nullableText,
    status: z.string(),
    url: nullableText,
    created_at: nullableText,
    finished_at: nullableText,
  }),
  builds: z.array(z.looseObject({ name: z.string(), status: z.string() })).nullish(),
});

const notePayload = z.looseObject({
  project,
  user,
  object_attributes: z.looseObject({ note: z.string(), noteable_type: z.string(), url: nullableText, updated_at: nullableText, created_at: nullableText }),
  merge_request: z.looseObject({ source_branch: z.string() }).nullish(),
});

const RUNNING_STATUSES = new Set(["created", "waiting_for_resource", "preparing", "pending", "running", "scheduled", "manual"]);

function pipelineState(status: string): CiState {
  if (status === "success" || status === "skipped") return "passing";
  return RUNNING_STATUSES.has(status) ? "running" : "failing";
}

function readMergeRequest(payload: unknown, receivedAt: string): CodeHostChange {
  const { project, user, object_attributes: mr, reviewers } = parseInput(mergeRequestPayload, payload, "GitLab merge request payload");
  const where = { repository: project.path_with_namespace, branch: mr.source_branch, at: firstHostTime(mr.updated_at) ?? receivedAt };
  // Approvals arrive as merge request events; a reviewer's "requested changes" is their state on it.
  if (mr.action === "approved" || mr.action === "approval") {
    return { event: "review", ...where, review: { reviewer: user?.username ?? "someone", state: "approved", comment: null, url: mr.url ?? null } };
  }
  if (mr.action === "unapproved" || mr.action === "unapproval") {
    return { event: "review", ...where, review: { reviewer: user?.username ?? "someone", state: "dismissed", comment: null, url: mr.url ?? null } };
  }
  const requested = reviewers?.find((reviewer) => reviewer.state === "requested_changes");
  if (requested && mr.state === "opened") {
    return { event: "review", ...where, review: { reviewer: requested.username, state: "changes_requested", comment: null, url: mr.url ?? null } };
  }
  const state = mr.state === "merged" ? "merged" : mr.state === "opened" ? (mr.draft || mr.work_in_progress ? "draft" : "open") : "closed";
  return { event: "pull_request", ...where, pull_request: { url: mr.url ?? null, number: mr.iid, state, title: mr.title ?? null } };
}

function readPipeline(payload: unknown, receivedAt: string): CodeHostChange | null {
  const { project, object_attributes: pipeline, builds } = parseInput(pipelinePayload, payload, "GitLab pipeline payload");
  if (pipeline.tag) return null;
  const state = pipelineState(pipeline.status);
  const failedJobs = (builds ?? []).filter((build) => build.status === "failed").map((build) => build.name);
  return {
    event: "ci",
    repository: project.path_with_namespace,
    branch: pipeline.ref,
    at: firstHostTime(pipeline.finished_at, pipeline.created_at) ?? receivedAt,
    ci: {
      name: "pipeline",
      state,
      failing: state === "failing" ? (failedJobs.slice(0, 3).join(", ") || `pipeline #${pipeline.id}`) : null,
      url: pipeline.url ?? null,
      sha: pipeline.sha ?? null,
    },
  };
}

function readNote(payload: unknown, receivedAt: string): CodeHostChange | null {
  const { project, user, object_attributes: note, merge_request } = parseInput(notePayload, payload, "GitLab note payload");
  if (note.noteable_type !== "MergeRequest" || !merge_request) return null;
  return {
    event: "review",
    repository: project.path_with_namespace,
    branch: merge_request.source_branch,
    at: firstHostTime(note.updated_at, note.created_at) ?? receivedAt,
    review: { reviewer: user?.username ?? "someone", state: "commented", comment: note.note.trim() || null, url: note.url ?? null },
  };
}

/** The change a GitLab delivery reports (by its `X-Gitlab-Event`), or null for one the card does not show. */
export function readGitlabDelivery(event: string, payload: unknown, receivedAt: string): CodeHostChange | null {
  switch (event) {
    case "Merge Request Hook":
      return readMergeRequest(payload, receivedAt);
    case "Pipeline Hook":
      return readPipeline(payload, receivedAt);
    case "Note Hook":
      return readNote(payload, receivedAt);
    default:
      return null;
  }
}
