import { z } from "zod";
import { BatonError } from "../core/errors";
import type { CanonicalPacket } from "./canonical";
import { refuseInvisible } from "./display-name";

/**
 * Project-bound API tokens, in one place (docs/decisions/056-project-bound-tokens.md): how a
 * token's project is named, how it enters a packet, and the refusal of another project's thread.
 */

/**
 * A project named outside a packet (an API token's project, docs/decisions/056-project-bound-tokens.md),
 * read by the rules of a packet's `project` field: a string without characters a person
 * cannot see, trimmed, in Unicode NFC. Empty after trimming is refused: a packet's blank
 * project means "none", and a token is either bound or not.
 */
export const projectNameSchema = z
  .string({ error: "project must be a string: the name of a project, as packets write it in `project`" })
  .check(refuseInvisible("project"))
  .trim()
  .min(1, { error: "project must not be blank: give the name packets write in `project`, or leave the token unbound" })
  .transform((name) => name.normalize("NFC"));

/**
 * A packet sent with a project-bound token (docs/decisions/056-project-bound-tokens.md):
 * without a project it takes the token's, in what is stored as received too, before the
 * hash and the thread key, so task-only packets of two projects are two versions on two
 * threads; naming another project is refused.
 */
export function withBoundProject(
  received: Record<string, unknown>,
  canonical: CanonicalPacket,
  boundProject: string | undefined,
): { received: Record<string, unknown>; canonical: CanonicalPacket } {
  if (boundProject === undefined || canonical.project === boundProject) return { received, canonical };
  if (canonical.project === undefined) {
    return { received: { ...received, project: boundProject }, canonical: { ...canonical, project: boundProject } };
  }
  throw new BatonError(
    "forbidden",
    `This token is bound to project "${boundProject}"; the packet names project "${canonical.project}". ` +
      `Send it with a token of project "${canonical.project}", or leave project out to file it under "${boundProject}".`,
    { field: typeof received.project === "string" && received.project.trim() ? "project" : "repo", token_project: boundProject, packet_project: canonical.project },
  );
}

/**
 * Refuses a bound token's write to a stored thread whose project (its active version's)
 * is another, or none: the token may not take over such a thread. Null when it may write.
 */
export function threadOutsideProject(threadKey: string, threadProject: string | null, tokenProject: string): BatonError | null {
  if (threadProject === tokenProject) return null;
  const owner = threadProject === null ? "has no project" : `belongs to project "${threadProject}"`;
  return new BatonError(
    "forbidden",
    `This token is bound to project "${tokenProject}"; thread "${threadKey}" ${owner}, and a bound token writes only threads of its project.`,
    { thread_key: threadKey, thread_project: threadProject, token_project: tokenProject },
  );
}
