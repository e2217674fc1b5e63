import type { LedgerEventDto } from "./dto";

/**
 * Ledger events in words, for people: the thread page's ledger and the
 * timeline's feed say the same thing. Client-safe. Values from `data` are
 * only ever rendered as text.
 */
type Describe = (data: Record<string, unknown>) => string;

const text = (value: unknown) => (typeof value === "string" ? value : value === undefined || value === null ? "" : String(value));
const quoted = (value: unknown) => (text(value) ? ` "${text(value)}"` : "");
const risk = (verb: string): Describe => (data) => `${verb} the risk${quoted(data.detail)}${data.severity ? ` (${text(data.severity)})` : ""}`;
const session = (what: string): Describe => (data) => `${what}${data.note ? `: ${text(data.note)}` : ""}`;

const DESCRIBE: Partial<Record<LedgerEventDto["kind"], Describe>> = {
  packet_received: (data) =>
    `packet received from ${text(data.source)}${data.superseded_on_arrival ? " (older than the active one: kept as history)" : ""}${
      typeof data.secrets_redacted === "number" && data.secrets_redacted > 0
        ? `; ${data.secrets_redacted} secret${data.secrets_redacted === 1 ? "" : "s"} redacted`
        : ""
    }`,
  packet_superseded: () => "packet superseded by a newer one",
  packet_reports_attached: (data) => `verdict reports sent with it: ${((data.reports as unknown[] | undefined) ?? []).map(text).join(", ")}`,
  packet_located: (data) => `its file found at ${text(data.source_path)}: write-back and verdict reading use it`,
  thread_reopened: () => "thread re-opened by a new packet",
  thread_archived: (data) => `thread archived: ${text(data.reason)}`,
  human_approved: (data) => `approved the next action${data.note ? `: ${text(data.note)}` : ""} (revision ${text(data.revision)})`,
  human_intervened: (data) => `intervened: "${text(data.question)}" (revision ${text(data.revision)})`,
  human_answered: (data) =>
    `answered ${((data.answers as { question_id: string; answer: string }[] | undefined) ?? []).map((a) => `${a.question_id}: "${a.answer}"`).join(", ")} (revision ${text(data.revision)})`,
  human_answer_undone: (data) =>
    `took back the answer${((data.answers as unknown[] | undefined) ?? []).length === 1 ? "" : "s"} ${((data.answers as { question_id: string; answer: string }[] | undefined) ?? []).map((a) => `${a.question_id}: "${a.answer}"`).join(", ")} (revision ${text(data.revision)})`,
  packet_written_back: (data) => `human section (revision ${text(data.revision)}) written back to ${text(data.path)}`,
  writeback_skipped: (data) => `write-back skipped: ${text(data.reason)}`,
  risk_acknowledged: risk("acknowledged"),
  risk_resolved: risk("resolved"),
  risk_snoozed: (data) => `${risk("snoozed")(data)} ${data.snoozed_until ? `until ${text(data.snoozed_until)}` : "until its severity rises"}`,
  risk_untriaged: risk("took back the triage of"),
  risk_regressed: (data) => `a resolved risk came back${quoted(data.detail)}`,
  session_started: session("agent session started"),
  heartbeat: session("agent heartbeat"),
  session_ended: session("agent session ended"),
  thread_stale: (data) => `thread went stale${data.stale_hours ? `: nothing new for more than ${text(data.stale_hours)} h` : ""}`,
  watchdog_duplicate_topic: (data) => `watchdog: ${text(data.reason) || "another active packet on this branch has the same topic"}`,
  code_host_pull_request: (data) => `pull request #${text(data.number)} is ${text(data.state)}${quoted(data.title)}`,
  code_host_ci: (data) => `CI ${text(data.state)}: ${text(data.failing) || text(data.name)}`,
  code_host_review: (data) => `${text(data.reviewer)} ${text(data.state).replace("_", " ")} the pull request${quoted(data.comment)}`,
  budget_crossed: (data) => `${text(data.project)} crossed its ${text(data.period)} budget of ${text(data.amount)} ${text(data.currency)}`,
  integration_created: (data) => `code host integration "${text(data.name)}" (${text(data.host)}) added`,
  integration_deleted: (data) => `code host integration "${text(data.name)}" (${text(data.host)}) removed`,
  watchdog_commit_regressed: (data) => `watchdog: ${text(data.reason) || "the last known good commit is older than a superseded packet's"}`,
};

/** What happened, in words: the kind's description, or the kind itself spelled out. */
export function describeLedgerEvent(event: Pick<LedgerEventDto, "kind" | "data">): string {
  return DESCRIBE[event.kind]?.(event.data) ?? event.kind.replace(/_/g, " ");
}
