import type { Flag } from "../contract/lint";
import type { ThreadWorkDto } from "./dto";

const QUOTE_MAX = 120;
const quote = (text: string) => `"${text.length > QUOTE_MAX ? `${text.slice(0, QUOTE_MAX - 1)}…` : text}"`;

/**
 * The code host's news that needs a person: CI failing, or a reviewer asking for changes,
 * while the pull request is still open (a merged or closed one needs nobody).
 */
export function workFlags(work: ThreadWorkDto | undefined): Flag[] {
  if (!work) return [];
  const state = work.pull_request?.state;
  if (state === "merged" || state === "closed") return [];
  const flags: Flag[] = [];
  if (work.ci?.state === "failing") {
    flags.push({ code: "ci_failing", reason: `CI failing: ${work.ci.check ? quote(work.ci.check) : "a check"} failed.` });
  }
  if (work.review?.state === "changes_requested") {
    const comment = work.review.comment ? `: ${quote(work.review.comment)}` : ".";
    flags.push({ code: "changes_requested", reason: `${work.review.reviewer} requested changes${comment}` });
  }
  return flags;
}
