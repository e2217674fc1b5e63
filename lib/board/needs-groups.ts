import { enumMembers } from "../core/enum-members";
import type { FlagCode } from "../contract/lint";
import { severityRank, type Severity } from "../contract/severity";
import type { BoardCardDto } from "./dto";
import type { Column } from "./columns";

/**
 * Needs you, grouped by what the person must do (docs/decisions/060-needs-you-groups.md): a card
 * sits in the group of its most urgent reason, the groups in this order, the most urgent first.
 * Pure and browser-safe: the server sorts the column with it and the board groups with it.
 */
export const NEEDS_GROUP_TITLES = {
  question: "Waiting on your answer",
  severe_risk: "Critical or high risk to triage",
  verdict_failed: "Verdict failed",
  went_back: "Went back",
  incomplete: "Handoff incomplete",
  stale: "Waiting for a long time",
} as const;
/** The groups, the most urgent first. */
export const NEEDS_GROUPS = enumMembers(NEEDS_GROUP_TITLES);
export type NeedsGroup = (typeof NEEDS_GROUPS)[number];

type GroupedCard = Pick<BoardCardDto, "attention" | "updated_at" | "key"> & {
  active_packet: Pick<BoardCardDto["active_packet"], "flags" | "highest_severity" | "human">;
};

/** The group of a card of Needs you: the first reason that holds, in the order of NEEDS_GROUPS. */
export function needsGroupOf(card: GroupedCard): NeedsGroup {
  const codes = new Set<FlagCode>(card.active_packet.flags.map((flag) => flag.code));
  // A card nobody looked at for longer than the stale threshold is backlog, whatever it waits for.
  if (codes.has("stale")) return "stale";
  if (codes.has("open_questions") && card.active_packet.human.unanswered_questions > 0) return "question";
  if (card.attention.unacknowledged_severe > 0) return "severe_risk";
  if (codes.has("verdict_failed")) return "verdict_failed";
  if (card.attention.regressed > 0 || codes.has("commit_regressed")) return "went_back";
  return "incomplete";
}

const rank = (severity: Severity | null) => (severity ? severityRank(severity) : 0);

/** Within a column: the most severe first, then the most recently active (what just arrived is seen). */
export function compareBySeverity(a: GroupedCard, b: GroupedCard): number {
  return (
    rank(b.active_packet.highest_severity) - rank(a.active_packet.highest_severity) ||
    b.updated_at.localeCompare(a.updated_at) ||
    a.key.localeCompare(b.key)
  );
}

/** Needs you's order: by group, then as every column. */
export function compareNeedsYou(a: GroupedCard, b: GroupedCard): number {
  return NEEDS_GROUPS.indexOf(needsGroupOf(a)) - NEEDS_GROUPS.indexOf(needsGroupOf(b)) || compareBySeverity(a, b);
}

export interface CardGroup<Card> {
  id: NeedsGroup;
  title: string;
  cards: Card[];
}

/** Cards already in Needs you's order, cut into their groups (empty groups left out). */
export function groupNeedsYou<Card extends GroupedCard>(cards: Card[]): CardGroup<Card>[] {
  const groups: CardGroup<Card>[] = [];
  for (const card of cards) {
    const id = needsGroupOf(card);
    const last = groups.at(-1);
    if (last?.id === id) last.cards.push(card);
    else groups.push({ id, title: NEEDS_GROUP_TITLES[id], cards: [card] });
  }
  return groups;
}

/** How a column's cards are ordered, on the server and when the browser applies a delta. */
export const columnOrder = (column: Column) => (column === "needs_you" ? compareNeedsYou : compareBySeverity);

/**
 * A column's cards sorted in place in columnOrder's order, each card's group found once (the
 * server sorts a whole board's Needs you: the comparator would find both groups per comparison).
 */
export function sortColumn<Card extends GroupedCard>(column: Column, cards: Card[]): Card[] {
  if (column !== "needs_you") return cards.sort(compareBySeverity);
  const rankOf = new Map(cards.map((card) => [card, NEEDS_GROUPS.indexOf(needsGroupOf(card))]));
  return cards.sort((a, b) => rankOf.get(a)! - rankOf.get(b)! || compareBySeverity(a, b));
}
