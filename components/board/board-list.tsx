"use client";

import { useEffect, useRef, useState } from "react";
import type { BoardDto, BoardCardDto } from "@/lib/board/dto";
import { visibleText } from "@/lib/contract/invisible";
import { groupNeedsYou } from "@/lib/board/needs-groups";
import { ThreadLink } from "@/components/shared/thread-link";
import { SeverityBadge } from "@/components/shared/severity-badge";
import { AgentText, AgentTextList } from "@/components/ui/agent-text";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { When } from "@/components/ui/time";
import { CardDetails } from "./board-card";
import { cardReasons, plural } from "./card-reasons";
import { BULK_APPROVE_MAX, useBulkApprove, type BulkStatus } from "./use-bulk-approve";
import type { ListSort } from "./board-view";
import { SortHeader, sortListRows } from "./list-sort";
import { ThreadOutcomes } from "./thread-outcomes";

interface BoardListProps {
  columns: BoardDto["columns"];
  now: number;
  canAct: boolean;
  /** Whether the columns carry all their cards (not the server's first paint). */
  complete: boolean;
  /** Where the list was scrolled to when the person last left the board (restored once). */
  savedScroll?: number;
  onScrolled: (offset: number) => void;
  /** The rows' order within each group (?sort=), or null for the board's. */
  sort: ListSort | null;
  onSort: (sort: ListSort | null) => void;
}

/** Rows a person may pick for a bulk approve: clean handoffs (Ready); anything that needs a person is looked at one by one. */
const selectable = (card: BoardCardDto) => card.column === "ready" && card.active_packet.human.decision?.kind !== "approved";

/**
 * The board as one dense table, a row per thread, in the board's order (Needs you by group
 * first): who, why, what next and how long ago. Ready rows can be picked and approved together.
 */
export function BoardList({ columns, now, canAct, complete, savedScroll, onScrolled, sort, onSort }: BoardListProps) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const restored = useRef(false);
  // Puts the list back where the person left it (the scroll position lives outside React), once every row is there.
  useEffect(() => {
    if (restored.current || !savedScroll || !complete || !scrollRef.current) return;
    restored.current = true;
    scrollRef.current.scrollTop = savedScroll;
  }, [savedScroll, complete]);
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  // The threads the confirm names, as the person saw them: each approve is based on that version.
  const [confirming, setConfirming] = useState<BoardCardDto[] | null>(null);
  const bulk = useBulkApprove();
  const groups = columns.flatMap((column) =>
    column.id === "needs_you"
      ? groupNeedsYou(column.cards).map((group) => ({ id: `needs_you:${group.id}`, title: `${column.title}: ${group.title}`, cards: sortListRows(group.cards, sort) }))
      : column.cards.length
        ? [{ id: column.id, title: column.title, cards: sortListRows(column.cards, sort) }]
        : [],
  );
  // What is picked and still approvable in the data shown now (a refresh may have moved a row on).
  const chosen = groups.flatMap((group) => group.cards).filter((card) => picked.has(card.key) && selectable(card));

  const toggle = (keys: string[], on: boolean) =>
    setPicked((current) => {
      const next = new Set(current);
      for (const key of keys) {
        if (on && next.size >= BULK_APPROVE_MAX) break;
        if (on) next.add(key);
        else next.delete(key);
      }
      return next;
    });

  async function approveConfirmed(cards: BoardCardDto[]) {
    setConfirming(null);
    setPicked(new Set());
    await bulk.approve(cards);
  }

  return (
    <section aria-label="Board as a list" className="flex min-h-0 flex-1 flex-col gap-2">
      {canAct ? (
        <div className="flex flex-wrap items-center gap-2 text-sm" role="group" aria-label="Bulk approve">
          <span aria-live="polite">{chosen.length ? `${plural(chosen.length, "thread")} picked` : `Pick Ready threads to approve them together (up to ${BULK_APPROVE_MAX}).`}</span>
          {chosen.length && !confirming ? (
            <>
              <Button variant="primary" onClick={() => setConfirming(chosen)} disabled={bulk.status.state === "sending"}>
                Approve {plural(chosen.length, "thread")}…
              </Button>
              <Button variant="link" onClick={() => setPicked(new Set())}>
                Clear
              </Button>
            </>
          ) : null}
          {confirming ? (
            <Alert tone="warning" className="flex flex-wrap items-center gap-2">
              <span>
                Approve {plural(confirming.length, "thread")} as you see them now? Each is one approval in your name; one that changed since is left alone.
              </span>
              <Button variant="primary" autoFocus onClick={() => void approveConfirmed(confirming)}>
                Yes, approve {confirming.length}
              </Button>
              <Button variant="link" onClick={() => setConfirming(null)}>
                Cancel
              </Button>
            </Alert>
          ) : null}
          <BulkResult status={bulk.status} onDismiss={bulk.reset} />
        </div>
      ) : null}
      <div ref={scrollRef} className="min-h-0 flex-1 overflow-auto rounded-xl bg-surface ring-1 ring-line max-md:overflow-x-hidden" onScroll={(event) => onScrolled(event.currentTarget.scrollTop)}>
        {/* On a phone each row stacks (who, why, next action) instead of scrolling sideways. */}
        <table className="w-full table-fixed border-collapse text-sm max-md:block">
          <caption className="sr-only">Every thread on the board, a row each, Needs you first; the Severity, Agent and Age headers sort the rows within each group</caption>
          <thead className="sticky top-0 z-10 bg-sunken text-left text-xs text-muted max-md:sr-only">
            <tr>
              <th scope="col" className="w-10 px-2 py-1.5">
                <span className="sr-only">Pick</span>
              </th>
              <SortHeader label="Severity" sortKey="severity" sort={sort} onSort={onSort} className="w-24 px-2 py-1.5" />
              <SortHeader label="Agent" sortKey="agent" sort={sort} onSort={onSort} className="w-72 px-2 py-1.5" />
              <th scope="col" className="w-64 px-2 py-1.5">Why</th>
              <th scope="col" className="px-2 py-1.5">Next action</th>
              <SortHeader label="Age" sortKey="age" sort={sort} onSort={onSort} className="w-44 px-2 py-1.5" />
            </tr>
          </thead>
          {groups.map((group) => {
            const pickable = canAct ? group.cards.filter(selectable) : [];
            const allPicked = pickable.length > 0 && pickable.every((card) => picked.has(card.key));
            return (
              <tbody key={group.id} data-group={group.id} className="max-md:block">
                <tr className="bg-sunken/60 max-md:flex max-md:items-center">
                  <td className="px-2 py-1">
                    {pickable.length ? (
                      <Checkbox label={`Pick all ${pickable.length} in ${group.title}`} checked={allPicked} onChange={(on) => toggle(pickable.map((card) => card.key), on)} />
                    ) : null}
                  </td>
                  <th scope="colgroup" colSpan={5} className="px-2 py-1 text-left max-md:block text-xs font-semibold tracking-wide text-strong uppercase">
                    {group.title} <span className="font-normal text-muted normal-case">{plural(group.cards.length, "thread")}</span>
                  </th>
                </tr>
                {group.cards.map((card) => (
                  <ListRow key={card.key} card={card} now={now} pickable={canAct && selectable(card)} picked={picked.has(card.key)} onPick={(on) => toggle([card.key], on)} />
                ))}
              </tbody>
            );
          })}
        </table>
      </div>
    </section>
  );
}

function ListRow({ card, now, pickable, picked, onPick }: { card: BoardCardDto; now: number; pickable: boolean; picked: boolean; onPick: (on: boolean) => void }) {
  const packet = card.active_packet;
  const reasons = card.column === "needs_you" ? cardReasons(card) : [];
  const agent = card.agent ?? "unknown agent";
  return (
    <tr className="border-t border-line align-top hover:bg-sunken/40 max-md:flex max-md:flex-wrap max-md:items-center max-md:py-1" data-testid="board-row" data-thread-key={card.key}>
      <td className="px-2 py-1 max-md:block">{pickable ? <Checkbox label={`Pick ${agent} (${card.key})`} checked={picked} onChange={onPick} /> : null}</td>
      <td className="px-2 py-1.5 max-md:block">
        <SeverityBadge severity={packet.highest_severity} />
      </td>
      <td className="truncate px-2 py-1.5 max-md:block max-md:min-w-0 max-md:flex-1 max-md:break-words max-md:whitespace-normal">
        <span className="font-semibold text-strong">
          <AgentText text={agent} />
        </span>{" "}
        <AgentTextList className="text-xs text-muted" items={[card.project, card.branch].some(Boolean) ? [card.project, card.branch] : [card.key]} />
      </td>
      <td className="px-2 py-1.5 text-xs max-md:block max-md:basis-full max-md:py-0.5">
        {reasons.length ? (
          <ul aria-label="Needs you because" className="flex flex-wrap gap-1">
            {reasons.map((reason) => (
              <li key={reason.code} title={reason.detail ? visibleText(reason.detail) : undefined} className="rounded-full bg-amber-100 px-2 py-0.5 font-medium text-amber-950 dark:bg-amber-950 dark:text-amber-100">
                {reason.text}
              </li>
            ))}
          </ul>
        ) : (
          <CardDetails card={card} />
        )}
      </td>
      <td className="px-2 py-1.5 max-md:block max-md:min-w-0 max-md:basis-full max-md:py-0.5">
        <ThreadLink threadKey={card.key} className="line-clamp-1 font-medium max-md:line-clamp-2 break-words text-link underline-offset-2 hover:underline">
          {packet.next_action ? <AgentText text={packet.next_action} /> : <span className="text-muted italic">No next action recorded</span>}
        </ThreadLink>
      </td>
      <td className="px-2 py-1.5 text-xs text-muted max-md:block max-md:py-0.5">
        <When iso={packet.received_at} written={packet.created_at} now={now} />
      </td>
    </tr>
  );
}

function Checkbox({ label, checked, onChange }: { label: string; checked: boolean; onChange: (on: boolean) => void }) {
  // The label's box is the 24 px target; the box inside it is the browser's own.
  return (
    <label className="inline-flex min-h-6 min-w-6 cursor-pointer items-center justify-center">
      <input type="checkbox" className="size-4 accent-sky-700" aria-label={label} checked={checked} onChange={(event) => onChange(event.target.checked)} />
    </label>
  );
}

/** What a bulk approve did, per thread that did not go through, so that the person can act on each. */
function BulkResult({ status, onDismiss }: { status: BulkStatus; onDismiss: () => void }) {
  if (status.state === "idle") return null;
  if (status.state === "sending") {
    return <p role="status">Approving: {status.done} of {status.of} done…</p>;
  }
  const failed = status.outcomes.filter((outcome) => outcome.state !== "approved");
  const approved = status.outcomes.length - failed.length;
  return (
    <div role="status" className="basis-full space-y-1" data-testid="bulk-result">
      <p>
        {plural(approved, "thread")} approved{failed.length ? `; ${plural(failed.length, "thread")} not:` : "."}{" "}
        <Button variant="link" onClick={onDismiss}>
          Dismiss
        </Button>
      </p>
      {failed.length ? (
        <ThreadOutcomes
          className="list-disc pl-5 text-sm"
          outcomes={failed.map((outcome) => ({
            ...outcome,
            said: (
              <>
                {outcome.state === "conflict" ? "someone acted on it first or a newer packet arrived; the board shows it as it is now. " : ""}
                <AgentText text={outcome.message} />
              </>
            ),
          }))}
        />
      ) : null}
    </div>
  );
}
