import type { HumanSection } from "@/lib/human/section";
import { formatMoment } from "@/lib/browser/moment";

/** One line on what people did to a packet so far: shown after a conflict, so the person sees what changed. */
export function describeHumanSection(section: HumanSection): string {
  const parts: string[] = [];
  if (section.decision) parts.push(`${section.decision.kind} by ${section.decision.by} at ${formatMoment(section.decision.at)}`);
  if (section.answers.length) parts.push(`${section.answers.length} answer(s)`);
  if (section.questions.length) parts.push(`${section.questions.length} instruction(s) for the next session`);
  return `${parts.length ? parts.join(" · ") : "nothing decided yet"} (revision ${section.revision})`;
}
