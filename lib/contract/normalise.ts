import { RECEIVED_MARKDOWN_KEY, type MappedFrom } from "./aliases";
import type { PacketInput } from "./schema";
import type { CanonicalPacket, CanonicalQuestion, CanonicalRisk, VerdictPointerKind } from "./canonical";
import { normaliseSeverity } from "./severity";
import { riskFingerprint } from "./fingerprint";
import { commandText } from "./commands";
import { MAX_TIMESTAMP_MS, parseProducerTimestamp } from "./timestamps";
import { normalisePullRequest, normaliseUsage } from "./work-fields";

/** What normalisation noticed that the canonical form alone no longer shows. */
export interface NormaliseNotes {
  /** next_action was the generator's "needs human" placeholder. */
  nextActionSentinel: boolean;
  /** Raw severity words that were missing (null) or unrecognised. */
  unknownSeverityWords: (string | null)[];
  /** Producer clock in epoch ms, when the packet had a valid one. */
  createdAtMs: number | null;
  /** A created_at/timestamp that parsed but lies beyond any real date. */
  unreadableClock: string | null;
  /** The packet came in another format and was read under the contract's names (lib/contract/aliases.ts). */
  mappedFrom: MappedFrom | null;
}

export const NEXT_ACTION_SENTINEL = "no next_action recorded; needs human";

const KNOWN_FIELDS = new Set([
  "schema_version", "thread", "session_id", "task_id", "agent", "project", "repo", "branch", "topic",
  "last_known_good_commit", "status", "created_at", "timestamp", "summary", "changed_files", "commands_run",
  "failed_attempts", "open_risks", "next_action", "verdict_pointer", "feedback_tail", "clean_state",
  "assumptions_to_validate", "questions_for_human", "preconditions", "verdict", "human", "pull_request", "usage",
  // A Markdown handoff's text: kept in the received packet, not copied into the canonical form.
  RECEIVED_MARKDOWN_KEY,
]);

const trimmed = (value: string | null | undefined) => {
  const text = value?.trim();
  return text ? text : undefined;
};
/** A field that names a thread: trimmed, in Unicode NFC, so that "é" typed two ways is one key. */
const identity = (value: string | null | undefined) => trimmed(value)?.normalize("NFC");
const present = <T>(value: T | null | undefined): value is T => value !== null && value !== undefined;
const defined = <T extends object>(value: T): T =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;

function normaliseRisks(risks: NonNullable<PacketInput["open_risks"]>, notes: NormaliseNotes): CanonicalRisk[] {
  return risks.map((risk, index) => {
    const item = typeof risk === "string" ? { detail: risk } : risk;
    const rawWord = typeof risk === "string" || !present(item.severity) ? null : String(item.severity);
    const { severity, known } = normaliseSeverity(rawWord);
    if (!known) notes.unknownSeverityWords.push(rawWord);
    const detail = [item.detail, item.description, item.risk, item.text].find((text) => typeof text === "string" && text.trim() !== "") ?? "";
    return defined({
      id: present(item.id) ? String(item.id) : `r${index}`,
      severity,
      severity_raw: rawWord,
      detail,
      mitigation: trimmed(item.mitigation),
      fingerprint: riskFingerprint(detail),
    });
  });
}

/**
 * Answers are matched by question id, so ids are unique within a packet: an
 * explicit id keeps its value; a default `q<index>` that an explicit id already
 * uses, or a repeated id, gets a suffix (`q1-2`).
 */
function questionIds(questions: NonNullable<PacketInput["questions_for_human"]>): string[] {
  const explicit = questions.map((question) => (typeof question !== "string" && present(question.id) ? String(question.id) : null));
  const reserved = new Set(explicit.filter((id): id is string => id !== null));
  const taken = new Set<string>();
  // The next suffix to try per id: repeated ids cost one step each, not a count from 2.
  const nextSuffix = new Map<string, number>();
  return explicit.map((given, index) => {
    const wanted = given ?? `q${index}`;
    let id = wanted;
    let n = nextSuffix.get(wanted) ?? 2;
    while (taken.has(id) || (given === null && reserved.has(id))) id = `${wanted}-${n++}`;
    nextSuffix.set(wanted, n);
    taken.add(id);
    return id;
  });
}

function normaliseQuestions(questions: NonNullable<PacketInput["questions_for_human"]>): CanonicalQuestion[] {
  const ids = questionIds(questions);
  return questions.map((question, index) => {
    if (typeof question === "string") return { id: ids[index]!, question, blocking: false };
    return defined({
      id: ids[index]!,
      question: question.question,
      context: trimmed(question.context),
      options: question.options ?? undefined,
      blocking: question.blocking === true,
    });
  });
}

function pointerKind(ref: string): VerdictPointerKind {
  if (/(^|[\/_.-])reviews?([\/_.-]|$)/i.test(ref)) return "review";
  if (/(^|[\/_.-])verif(y|ication|ications)?([\/_.-]|$)/i.test(ref)) return "verification";
  return "other";
}

function normaliseVerdictPointers(pointer: NonNullable<PacketInput["verdict_pointer"]>) {
  const items = Array.isArray(pointer) ? pointer : [pointer];
  return items.flatMap((item) => {
    if (typeof item === "string") return [{ kind: pointerKind(item), ref: item }];
    const refs: { kind: VerdictPointerKind; ref: string }[] = [];
    const verification = item.verification ?? item.verdict;
    if (present(verification)) refs.push({ kind: "verification", ref: verification });
    if (present(item.review)) refs.push({ kind: "review", ref: item.review });
    return refs;
  });
}

function normaliseNextAction(value: NonNullable<PacketInput["next_action"]>, notes: NormaliseNotes) {
  const item = typeof value === "string" ? { action: value } : value;
  const text = trimmed(item.action ?? item.description);
  if (!text) return undefined;
  if (text.toLowerCase() === NEXT_ACTION_SENTINEL) {
    notes.nextActionSentinel = true;
    return undefined;
  }
  const command = present(item.command) ? commandText(item.command) : undefined;
  return defined({ text, command, owner: trimmed(item.owner) });
}

function normaliseCleanState(value: NonNullable<PacketInput["clean_state"]>) {
  const items = Array.isArray(value) ? value : value.blocking;
  return items
    .map((item) =>
      typeof item === "string"
        ? { detail: item }
        : defined({ check: trimmed(item.check), detail: item.detail ?? item.check ?? "" }),
    )
    .filter((item) => item.detail.trim() !== "");
}

function normaliseVerdict(verdict: NonNullable<PacketInput["verdict"]>) {
  const out = defined({
    passed: verdict.passed ?? undefined,
    review_total: verdict.review_total ?? undefined,
    review_verdict: trimmed(verdict.review_verdict)?.toLowerCase(),
  });
  // A verdict of nulls says nothing; treat it as absent (verdict_missing then applies).
  return Object.keys(out).length ? out : undefined;
}

function normaliseCreatedAt(input: PacketInput, notes: NormaliseNotes): string | undefined {
  const raw = input.created_at ?? input.timestamp;
  if (!present(raw)) return undefined;
  const ms = parseProducerTimestamp(raw);
  if (ms === null || ms > MAX_TIMESTAMP_MS || ms < 0) {
    // Usually epoch milliseconds sent where the contract says seconds.
    notes.unreadableClock = String(raw);
    return undefined;
  }
  notes.createdAtMs = ms;
  return new Date(ms).toISOString();
}

/** Maps a validated packet to the one canonical form Baton stores and serves. */
export function normalisePacket(
  input: PacketInput,
  received: Record<string, unknown>,
  mappedFrom: MappedFrom | null = null,
): { canonical: CanonicalPacket; notes: NormaliseNotes } {
  const notes: NormaliseNotes = {
    nextActionSentinel: false,
    unknownSeverityWords: [],
    createdAtMs: null,
    unreadableClock: null,
    mappedFrom,
  };
  // Unknown fields come from the received object itself: a parser's copy may
  // have dropped keys such as "__proto__", which are kept here as plain data.
  const extra: Record<string, unknown> = {};
  for (const key of Object.keys(received)) {
    if (!KNOWN_FIELDS.has(key)) Object.defineProperty(extra, key, { value: received[key], enumerable: true });
  }
  const agent = present(input.agent)
    ? typeof input.agent === "string"
      ? { name: input.agent.normalize("NFC") }
      : defined({ name: input.agent.name.normalize("NFC"), kind: trimmed(input.agent.kind), model: trimmed(input.agent.model) })
    : undefined;

  const canonical: CanonicalPacket = defined({
    schema_version: 1 as const,
    thread: identity(input.thread),
    session_id: identity(input.session_id),
    task_id: present(input.task_id) ? identity(String(input.task_id)) : undefined,
    agent: agent && agent.name.trim() ? agent : undefined,
    project: identity(input.project ?? input.repo),
    branch: identity(input.branch),
    topic: identity(input.topic),
    last_known_good_commit: trimmed(input.last_known_good_commit),
    status: trimmed(input.status)?.toLowerCase(),
    created_at: normaliseCreatedAt(input, notes),
    summary: present(input.summary) ? input.summary : undefined,
    changed_files: input.changed_files?.map((file) =>
      typeof file === "string"
        ? { path: file }
        : defined({
            path: file.path,
            change: trimmed(file.change),
            additions: file.additions ?? undefined,
            deletions: file.deletions ?? undefined,
          }),
    ),
    commands_run: input.commands_run?.map((record) =>
      typeof record === "string"
        ? { command: commandText(record) }
        : defined({
            command: commandText(record.command),
            exit_code: record.exit_code,
            duration_ms: record.duration_ms ?? undefined,
          }),
    ),
    failed_attempts: input.failed_attempts?.map((attempt) => {
      if (typeof attempt === "string") {
        // "cmd -> exit 1" is how one reference generator records a failed command.
        const exit = /->\s*exit\s+(-?\d+)\s*$/i.exec(attempt);
        return defined({ attempt, exit_code: exit ? Number(exit[1]) : undefined });
      }
      const tried = attempt.attempt ?? attempt.command;
      return defined({
        attempt: commandText(tried as string | string[]),
        reason: trimmed(attempt.reason ?? attempt.why ?? attempt.error),
        exit_code: attempt.exit_code,
      });
    }),
    open_risks: input.open_risks ? normaliseRisks(input.open_risks, notes) : undefined,
    next_action: present(input.next_action) ? normaliseNextAction(input.next_action, notes) : undefined,
    verdict_pointer: present(input.verdict_pointer) ? normaliseVerdictPointers(input.verdict_pointer) : undefined,
    feedback_tail: input.feedback_tail?.map((record) => ({
      ...record,
      command: commandText(record.command),
      exit_code: record.exit_code,
    })),
    clean_state: present(input.clean_state) ? normaliseCleanState(input.clean_state) : undefined,
    assumptions_to_validate: input.assumptions_to_validate?.map((item) =>
      typeof item === "string" ? { text: item } : defined({ text: item.text, score: item.score ?? undefined }),
    ),
    questions_for_human: input.questions_for_human ? normaliseQuestions(input.questions_for_human) : undefined,
    preconditions: input.preconditions ?? undefined,
    verdict: present(input.verdict) ? normaliseVerdict(input.verdict) : undefined,
    pull_request: present(input.pull_request) ? normalisePullRequest(input.pull_request) : undefined,
    usage: present(input.usage) ? normaliseUsage(input.usage) : undefined,
    extra,
  });
  return { canonical: withoutNul(canonical), notes };
}

/**
 * U+0000 read as U+FFFD in every string of the canonical form (keys too): no database text
 * holds it (PostgreSQL refuses it), and nobody can see it. The packet as received keeps it,
 * escaped in its JSON text.
 */
export function withoutNul<T>(value: T): T {
  if (typeof value === "string") return (value.includes("\u0000") ? value.replaceAll("\u0000", "\uFFFD") : value) as T;
  if (Array.isArray(value)) return value.map(withoutNul) as T;
  if (value && typeof value === "object") {
    const copy: Record<string, unknown> = {};
    // defineProperty: a key such as "__proto__" stays plain data.
    for (const [key, item] of Object.entries(value)) Object.defineProperty(copy, withoutNul(key), { value: withoutNul(item), enumerable: true, writable: true, configurable: true });
    return copy as T;
  }
  return value;
}
