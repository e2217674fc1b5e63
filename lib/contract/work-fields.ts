import type { PacketInput } from "./schema";
import type { CanonicalPacket } from "./canonical";

/** `pull_request` and `usage`: the work outside the agent (docs/contract.md#other-fields). */

type PullRequestInput = NonNullable<PacketInput["pull_request"]>;
type UsageInput = NonNullable<PacketInput["usage"]>;
export type PullRequestState = NonNullable<NonNullable<CanonicalPacket["pull_request"]>["state"]>;

const trimmed = (value: string | null | undefined) => value?.trim() || undefined;
const defined = <T extends object>(value: T): T =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;

/** The number at the end of a pull or merge request URL (…/pull/12, …/merge_requests/12). */
function numberFromUrl(url: string): number | undefined {
  const match = /\/(?:pull|pulls|merge_requests)\/(\d+)(?:[/?#]|$)/.exec(url);
  return match ? Number(match[1]) : undefined;
}

/** "opened" is GitLab's word for open; `draft` and `merged` flags win over a plain open/closed state. */
export function pullRequestState(word: string | null | undefined, flags: { draft?: boolean | null; merged?: boolean | null } = {}): PullRequestState | undefined {
  if (flags.merged === true) return "merged";
  const state = word?.trim().toLowerCase();
  if (flags.draft === true && (state === undefined || state === "open" || state === "opened")) return "draft";
  if (state === "opened") return "open";
  return state === "open" || state === "draft" || state === "merged" || state === "closed" ? state : undefined;
}

export function normalisePullRequest(value: PullRequestInput): CanonicalPacket["pull_request"] {
  if (typeof value === "number") return { number: value };
  if (typeof value === "string") {
    const url = value.trim();
    return url ? defined({ url, number: numberFromUrl(url) }) : undefined;
  }
  const url = trimmed(value.url ?? value.html_url ?? value.web_url);
  const number = value.number != null ? Number(value.number) : (value.iid ?? (url ? numberFromUrl(url) : undefined));
  return defined({
    url,
    number: number ?? undefined,
    state: pullRequestState(value.state, value),
    head_branch: trimmed(value.head_branch ?? value.head ?? value.source_branch)?.normalize("NFC"),
  });
}

export function normaliseUsage(value: UsageInput): CanonicalPacket["usage"] {
  const currency = trimmed(value.currency)?.toUpperCase();
  const cost =
    typeof value.cost === "number"
      ? { amount: value.cost, currency: currency ?? "USD" }
      : value.cost
        ? { amount: value.cost.amount, currency: trimmed(value.cost.currency)?.toUpperCase() ?? currency ?? "USD" }
        : (value.cost_usd ?? value.total_cost_usd) != null
          ? { amount: (value.cost_usd ?? value.total_cost_usd)!, currency: "USD" }
          : undefined;
  const durationMs = value.duration_ms ?? (value.duration_seconds != null ? value.duration_seconds * 1000 : undefined);
  const out = defined({
    input_tokens: value.input_tokens ?? value.prompt_tokens ?? undefined,
    output_tokens: value.output_tokens ?? value.completion_tokens ?? undefined,
    cost,
    model: trimmed(value.model),
    duration_ms: durationMs ?? undefined,
  });
  // A usage of nulls says nothing; treat it as absent.
  return Object.keys(out).length ? out : undefined;
}
