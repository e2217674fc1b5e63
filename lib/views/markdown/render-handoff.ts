import type { CanonicalPacket, CanonicalQuestion, CanonicalRisk } from "../../contract/canonical";
import { FLAG_TITLES, type Flag } from "../../contract/lint";
import { severityRank } from "../../contract/severity";
import type { HumanSection } from "../../human/section";
import { blockText, codeBlock, codeSpan, inlineText, linkOrCode, tableRow } from "./escape";

/**
 * The one markdown rendering of a packet: a pull-request body, a `handoff.md`.
 * Every string from the packet (and from people) goes through ./escape, so the
 * structure written here is the only structure a renderer sees. Deterministic:
 * the same input gives the same bytes.
 */

export interface RenderHandoffInput {
  canonical: CanonicalPacket;
  flags: Flag[];
  threadKey: string;
  packetId?: string;
  human?: HumanSection | null;
}

export const NO_NEXT_ACTION = "No next action recorded.";

type Block = string | null;

const section = (title: string, body: Block): Block => (body ? `## ${title}\n\n${body}` : null);
const bulletList = (items: readonly string[]): Block => (items.length ? items.map((item) => `- ${item}`).join("\n") : null);
const present = (text: string | undefined): text is string => text !== undefined && text.trim() !== "";

function formatDuration(ms: number | undefined): string | null {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return null;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round((ms % 60_000) / 1000);
  return `${Math.floor(ms / 60_000)} min${seconds ? ` ${seconds} s` : ""}`;
}

function title({ canonical, threadKey }: RenderHandoffInput): string {
  const name = [canonical.topic, canonical.task_id].find(present);
  // A thread key is an identifier, and as plain text "@scope/branch" would mention a GitHub team.
  return `# Handoff: ${name ? inlineText(name) : codeSpan(threadKey)}`;
}

function metadata({ canonical, threadKey, packetId }: RenderHandoffInput): Block {
  const { agent } = canonical;
  const agentDetail = agent ? [agent.kind, agent.model].filter(present).map(inlineText).join(", ") : "";
  const fields: [string, string | null][] = [
    ["Agent", agent ? inlineText(agent.name) + (agentDetail ? ` (${agentDetail})` : "") : null],
    ["Project", present(canonical.project) ? inlineText(canonical.project) : null],
    ["Branch", present(canonical.branch) ? codeSpan(canonical.branch) : null],
    ["Task", present(canonical.task_id) ? inlineText(canonical.task_id) : null],
    ["Created", present(canonical.created_at) ? inlineText(canonical.created_at) : null],
    ["Last known good commit", present(canonical.last_known_good_commit) ? codeSpan(canonical.last_known_good_commit) : null],
    ["Thread", codeSpan(threadKey)],
    ["Packet", present(packetId) ? codeSpan(packetId) : null],
  ];
  return fields.flatMap(([label, value]) => (value ? [`**${label}:** ${value}`] : [])).join(" · ");
}

function nextAction({ canonical }: RenderHandoffInput): Block {
  const action = canonical.next_action;
  if (!action || !present(action.text)) return section("Next action", NO_NEXT_ACTION);
  const parts = [blockText(action.text)];
  if (present(action.command)) parts.push(codeBlock(action.command, "sh"));
  if (present(action.owner)) parts.push(`**Owner:** ${inlineText(action.owner)}`);
  return section("Next action", parts.join("\n\n"));
}

function severityCell(risk: CanonicalRisk): string {
  const raw = risk.severity_raw?.trim();
  if (raw === undefined || raw === "") return `${risk.severity} (no severity given)`;
  return raw.toLowerCase() === risk.severity ? risk.severity : `${risk.severity} (given as "${inlineText(raw)}")`;
}

function openRisks({ canonical }: RenderHandoffInput): Block {
  // Highest first; Array.prototype.sort is stable, so the agent's order holds within a severity.
  const risks = [...(canonical.open_risks ?? [])].sort((a, b) => severityRank(b.severity) - severityRank(a.severity));
  if (!risks.length) return null;
  const withMitigation = risks.some((risk) => present(risk.mitigation));
  const header = withMitigation ? ["Severity", "Risk", "Mitigation"] : ["Severity", "Risk"];
  const rows = risks.map((risk) => {
    const cells = [severityCell(risk), inlineText(risk.detail)];
    return tableRow(withMitigation ? [...cells, inlineText(risk.mitigation ?? "")] : cells);
  });
  return section("Open risks", [tableRow(header), tableRow(header.map(() => "---")), ...rows].join("\n"));
}

function questionItem(question: CanonicalQuestion): string {
  const lines = [`${question.blocking ? "**Blocking:** " : ""}${inlineText(question.question)}`];
  if (present(question.context)) lines.push(`  - Context: ${inlineText(question.context)}`);
  if (question.options?.length) {
    lines.push("  - Options:", ...question.options.map((option, index) => `    ${index + 1}. ${inlineText(option)}`));
  }
  return lines.join("\n");
}

function changedFile(file: NonNullable<CanonicalPacket["changed_files"]>[number]): string {
  const details: string[] = [];
  if (present(file.change)) details.push(inlineText(file.change));
  if (file.additions !== undefined || file.deletions !== undefined) {
    details.push(`+${file.additions ?? "?"}/-${file.deletions ?? "?"}`);
  }
  return codeSpan(file.path) + (details.length ? ` (${details.join(", ")})` : "");
}

function commandRun(command: NonNullable<CanonicalPacket["commands_run"]>[number]): string {
  const { exit_code: exit } = command;
  const marker = exit === null ? "**Did not finish:** " : exit !== undefined && exit !== 0 ? "**Failed:** " : "";
  const outcome = [exit === undefined ? null : exit === null ? "no exit code" : `exit ${exit}`, formatDuration(command.duration_ms)];
  const details = outcome.filter((part) => part !== null).join(", ");
  return `${marker}${codeSpan(command.command)}${details ? `: ${details}` : ""}`;
}

function failedAttempt(attempt: NonNullable<CanonicalPacket["failed_attempts"]>[number]): string {
  let text = inlineText(attempt.attempt);
  if (present(attempt.reason)) text += `: ${inlineText(attempt.reason)}`;
  // "cmd -> exit 1" already says it; the exit code was read from that text.
  const saysExit = /exit\s+-?\d+\s*$/i.test(attempt.attempt);
  if (attempt.exit_code !== undefined && !saysExit) {
    text += attempt.exit_code === null ? " (no exit code)" : ` (exit ${attempt.exit_code})`;
  }
  return text;
}

function assumption(item: NonNullable<CanonicalPacket["assumptions_to_validate"]>[number]): string {
  return inlineText(item.text) + (item.score !== undefined ? ` (score ${item.score})` : "");
}

function cleanStateProblem(problem: NonNullable<CanonicalPacket["clean_state"]>[number]): string {
  return (present(problem.check) ? `${codeSpan(problem.check)}: ` : "") + inlineText(problem.detail);
}

function verdict({ canonical }: RenderHandoffInput): Block {
  const lines: string[] = [];
  const inline = canonical.verdict;
  if (inline?.passed !== undefined) lines.push(`Verification: ${inline.passed ? "passed" : "**not passed**"}`);
  if (inline && (inline.review_verdict !== undefined || inline.review_total !== undefined)) {
    const review: string[] = [];
    if (inline.review_verdict !== undefined) review.push(inlineText(inline.review_verdict));
    if (inline.review_total !== undefined) review.push(`${inline.review_total}/10`);
    lines.push(`Review: ${review.join(", ")}`);
  }
  const labels = { verification: "Verification report", review: "Review report", other: "Report" } as const;
  for (const pointer of canonical.verdict_pointer ?? []) lines.push(`${labels[pointer.kind]}: ${linkOrCode(pointer.ref)}`);
  return section("Verdict", bulletList(lines));
}

function flagsSection({ flags }: RenderHandoffInput): Block {
  const items = flags.map(
    (flag) => `**${FLAG_TITLES[flag.code] ?? inlineText(flag.code)}** (${codeSpan(flag.code)}): ${inlineText(flag.reason)}`,
  );
  return section("Flags", bulletList(items));
}

function humanSection({ human }: RenderHandoffInput): Block {
  if (!human || (!human.decision && !human.answers.length && !human.questions.length)) return null;
  const parts: string[] = [];
  const { decision } = human;
  if (decision) {
    const kind = decision.kind === "approved" ? "Approved: go ahead with the next action" : "Intervened: address the questions below first";
    const note = present(decision.note) ? `\n\n${blockText(decision.note)}` : "";
    parts.push(`**${kind}** (${inlineText(decision.by)}, ${inlineText(decision.at)})${note}`);
  }
  const answers = human.answers.map(
    (answer) => `**Q:** ${inlineText(answer.question)} **A:** ${inlineText(answer.answer)} (${inlineText(answer.by)}, ${inlineText(answer.at)})`,
  );
  if (answers.length) parts.push(`### Answers\n\n${bulletList(answers)}`);
  const questions = human.questions.map(
    (question) =>
      `${question.settled_by ? `**Settled** by ${inlineText(question.settled_by)}, ${inlineText(question.settled_at ?? "")}: ` : question.blocking ? "**Blocking:** " : ""}${inlineText(question.text)} (${inlineText(question.by)}, ${inlineText(question.at)})`,
  );
  if (questions.length) parts.push(`### Questions for the next session\n\n${bulletList(questions)}`);
  return section("Decision and answers", parts.join("\n\n"));
}

export function renderHandoffMarkdown(input: RenderHandoffInput): string {
  const { canonical } = input;
  const blocks: Block[] = [
    title(input),
    metadata(input),
    section("Summary", present(canonical.summary) ? blockText(canonical.summary) : null),
    nextAction(input),
    openRisks(input),
    section("Questions for a person", bulletList((canonical.questions_for_human ?? []).map(questionItem))),
    section("Changed files", bulletList((canonical.changed_files ?? []).map(changedFile))),
    section("Commands run", bulletList((canonical.commands_run ?? []).map(commandRun))),
    section("Failed attempts", bulletList((canonical.failed_attempts ?? []).map(failedAttempt))),
    section("Assumptions to validate", bulletList((canonical.assumptions_to_validate ?? []).map(assumption))),
    section("Preconditions", bulletList((canonical.preconditions ?? []).filter(present).map(codeSpan))),
    section("Clean state problems", bulletList((canonical.clean_state ?? []).map(cleanStateProblem))),
    verdict(input),
    flagsSection(input),
    humanSection(input),
  ];
  return `${blocks.filter((block): block is string => Boolean(block)).join("\n\n")}\n`;
}
