"use client";

import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useMemo, useState } from "react";
import { isTextField } from "@/lib/browser/text-field";
import { useDocumentKeys } from "@/lib/browser/use-document-keys";
import { describeLive } from "@/lib/browser/use-ledger-refresh";
import { useRovingList } from "@/lib/browser/use-roving-list";
import type { RiskListDto } from "@/lib/views/risks/dto";
import { triageBlocker } from "@/lib/views/risks/triage-state";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { EmptyList } from "@/components/ui/empty-list";
import { RiskFilters } from "./risk-filters";
import { RiskRow } from "./risk-row";
import { RiskTable, nextSort } from "./risk-table";
import { SnoozeChoice } from "./snooze-choice";
import { TriageBar } from "./triage-bar";
import { useRisks } from "./use-risks";
import { risksWord, useTriage, type TriageAction } from "./use-triage";

/** Elements whose Space already does something of their own. */
function ownsSpace(element: HTMLElement): boolean {
  return element.tagName === "BUTTON" || element.tagName === "A" || (element.tagName === "INPUT" && !isTextField(element));
}

/** The keys that act on the selection (or the current row): x or Space select, a/r/s triage. */
const ACTION_KEYS: Record<string, TriageAction | "toggle"> = { x: "toggle", " ": "toggle", a: "acknowledged", r: "resolved", s: "snoozed" };

/**
 * The risks triage list: server-rendered first, then TanStack Query, refreshed
 * by the ledger stream. One row is current (roving focus): j/k or the arrows
 * move it, x or Space select it, and a / r / s acknowledge, resolve or snooze
 * the selection (or the current row when nothing is selected).
 */
export function RisksClient({ initialList, initialSearch, canAct }: { initialList: RiskListDto; initialSearch: string; canAct: boolean }) {
  const router = useRouter();
  const pathname = usePathname();
  const search = useSearchParams().toString();
  const { data: list, error, reload, live, hasMore, loadingMore, loadMore } = useRisks(search, { list: initialList, search: initialSearch });
  // j/k walk the rows as they appear on screen: the server's order.
  const ordered = useMemo(() => list?.groups ?? [], [list]);
  const roving = useRovingList(ordered.map((group) => group.fingerprint));
  const { listRef, emptyRef } = roving;
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [snoozing, setSnoozing] = useState(false);
  const [announcement, setAnnouncement] = useState("");
  const triage = useTriage({
    reload,
    onDone: (done) => {
      setSelected(new Set());
      setSnoozing(false);
      setAnnouncement(done);
      roving.focusCurrent();
    },
  });

  const currentGroup = ordered[roving.currentIndex] ?? null;
  // Only rows still listed count as selected.
  const selection = ordered.filter((group) => selected.has(group.fingerprint));
  const acting = selection.length ? selection : currentGroup ? [currentGroup] : [];
  const act = (action: TriageAction, snoozedUntil?: string | null) => {
    // A key press for an action the bar shows disabled does nothing, as the button would.
    if (canAct && triageBlocker(action, acting) === null) void triage.act(acting, action, snoozedUntil);
  };

  const toggle = (fingerprint: string) =>
    setSelected((before) => {
      const after = new Set(before);
      if (!after.delete(fingerprint)) after.add(fingerprint);
      return after;
    });

  // Moving (j/k) works wherever the focus is on the page (a fresh load leaves it on <body>); acting needs the focus in the list.
  useDocumentKeys((event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target as HTMLElement;
    if (isTextField(target) || target.closest('[role="dialog"]') || roving.step(event)) return;
    // Keys that change data act only with the focus in the list: a stray key press elsewhere
    // on the page must not resolve the top risk (WCAG 2.1.4, character key shortcuts).
    if (!canAct || !currentGroup || !(listRef.current?.contains(target) ?? false)) return;
    const action = ACTION_KEYS[event.key];
    if (action === "toggle" && !(event.key === " " && ownsSpace(target))) {
      event.preventDefault();
      toggle(currentGroup.fingerprint);
    } else if (action === "snoozed") {
      event.preventDefault();
      if (triageBlocker("snoozed", acting) === null) setSnoozing(true);
    } else if (action && action !== "toggle") {
      event.preventDefault();
      act(action);
    } else if (event.key === "Escape" && selected.size) {
      event.preventDefault();
      setSelected(new Set());
    }
  });

  const setFilters = (next: URLSearchParams) => {
    const query = next.toString();
    router.replace(query ? `${pathname}?${query}` : pathname, { scroll: false });
    roving.place(null);
    setSelected(new Set());
  };

  const shown = list ?? initialList;
  const sortBy = (next: { sort: string; order?: string }) => {
    const params = new URLSearchParams(search);
    params.delete("cursor");
    for (const [key, value] of Object.entries(next)) {
      if (value && !(key === "sort" && value === "attention")) params.set(key, value);
      else params.delete(key);
    }
    if (next.sort === "attention") params.delete("order");
    setFilters(params);
  };

  // Ages are measured from when the server made the list, so server and browser render alike.
  const now = Date.parse(shown.generated_at);
  return (
    <div className="space-y-3">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <RiskFilters search={search} onChange={setFilters} />
        <p className="text-xs text-muted">
          {list ? `${risksWord(ordered.length)}${hasMore ? ` of ${list.total}` : ""} · ` : "loading · "}
          {describeLive(live)}
        </p>
      </div>
      <p className="text-xs text-muted">
        {shown.sort === "attention" ? (
          "Regressed first, then by severity; a column's header sorts by it. "
        ) : (
          <>
            Sorted by a column.{" "}
            <Button variant="link" className="px-0 py-0 text-xs" onClick={() => sortBy({ sort: "attention" })}>
              Regressed first, then by severity
            </Button>
            .{" "}
          </>
        )}
        j/k to move{canAct ? ", x or Space to select, a to acknowledge, r to resolve, s to snooze, Esc to clear the selection." : "."}
      </p>
      <p role="status" aria-live="polite" className="sr-only">
        {announcement}
      </p>
      <TriageBar
        canAct={canAct}
        selected={selection.length}
        hasCurrent={currentGroup !== null}
        acting={acting}
        pending={triage.pending}
        snoozing={snoozing}
        onAct={act}
        onSnooze={() => setSnoozing(true)}
        onClear={() => setSelected(new Set())}
      />
      {canAct && snoozing && acting.length > 0 ? (
        <SnoozeChoice
          what={risksWord(acting.length)}
          pending={triage.pending}
          onSnooze={(until) => act("snoozed", until)}
          onCancel={() => {
            setSnoozing(false);
            roving.focusCurrent();
          }}
        />
      ) : null}
      {triage.alert ? <Alert>{triage.alert}</Alert> : null}
      {error ? <Alert>{error.message}</Alert> : null}
      {ordered.length === 0 ? (
        <EmptyList ref={emptyRef}>{list ? "No risks need triage here." : "Loading…"}</EmptyList>
      ) : (
        <div ref={listRef}>
          <RiskTable
            groups={ordered}
            sort={shown.sort}
            order={shown.order}
            onSort={(column) => sortBy(nextSort(column, shown.sort, shown.order))}
            canAct={canAct}
            row={(group) => (
              <RiskRow
                key={group.fingerprint}
                group={group}
                now={now}
                roving={roving.item(group.fingerprint)}
                selected={selected.has(group.fingerprint)}
                canAct={canAct}
                onToggle={() => toggle(group.fingerprint)}
              />
            )}
          />
        </div>
      )}
      {list && hasMore ? (
        // The next page joins the list below the rows already there: the current row and the selection stay.
        <Button variant="secondary" onClick={loadMore} disabled={loadingMore}>
          {loadingMore ? "Loading more…" : `Show more (${list.total - ordered.length} more)`}
        </Button>
      ) : null}
      {list && list.hidden > 0 && list.view === "open" ? (
        <p className="text-sm text-muted">
          {risksWord(list.hidden)} resolved or snoozed not shown.{" "}
          <Button
            variant="link"
            onClick={() => {
              const next = new URLSearchParams(search);
              next.set("state", "all");
              setFilters(next);
            }}
          >
            Show them
          </Button>
        </p>
      ) : null}
    </div>
  );
}
