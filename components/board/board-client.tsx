"use client";

import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useCallback, useMemo, useRef, useState } from "react";
import { withQuery } from "@/lib/browser/fetch-parsed";
import { isTextField } from "@/lib/browser/text-field";
import { useDocumentKeys } from "@/lib/browser/use-document-keys";
import { describeLive } from "@/lib/browser/use-ledger-refresh";
import { useLiveQuery } from "@/lib/browser/use-live-query";
import { applyBoardDelta, BOARD_RESYNC_MS } from "@/lib/browser/board-delta";
import { boardDto, type BoardDto } from "@/lib/board/dto";
import { compareNeedsYou } from "@/lib/board/needs-groups";
import { Alert } from "@/components/ui/alert";
import { BoardColumn } from "./board-column";
import { BoardList } from "./board-list";
import { LostRaces, ReportLostRace, type LostRace } from "./lost-races";
import { useBoardReturn, type Position } from "./use-board-return";
import { listSortOf, sortParam, viewOf, withoutView, type BoardView, type ListSort } from "./board-view";
import { BoardFilters, FILTER_KEYS, type BoardFilterValues } from "./board-filters";
import { plural } from "./card-reasons";
import { EmptyBoard } from "./empty-board";

function filtersFrom(params: URLSearchParams): BoardFilterValues {
  return Object.fromEntries(FILTER_KEYS.map((key) => [key, params.get(key) ?? ""])) as unknown as BoardFilterValues;
}

function queryString(values: BoardFilterValues, view: BoardView, sort: ListSort | null): string {
  const params = new URLSearchParams();
  for (const key of FILTER_KEYS) if (values[key]) params.set(key, values[key]);
  if (view === "list") params.set("view", "list");
  if (view === "list" && sort) params.set("sort", sortParam(sort));
  return params.toString();
}


const MOVES: Record<string, [number, number]> = {
  ArrowDown: [0, 1], j: [0, 1],
  ArrowUp: [0, -1], k: [0, -1],
  ArrowLeft: [-1, 0], h: [-1, 0],
  ArrowRight: [1, 0], l: [1, 0],
};

/** The live kanban: server-rendered data first, then TanStack Query, refreshed by the ledger stream. */
export function BoardClient({ initialBoard, initialSearch, canAct }: { initialBoard: BoardDto; initialSearch: string; canAct: boolean }) {
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const view = viewOf(params);
  const sort = listSortOf(params);
  // The data's address leaves the view out: both views show the same board.
  const search = withoutView(params.toString());
  const filters = useMemo(() => filtersFrom(new URLSearchParams(search)), [search]);
  const searchRef = useRef<HTMLInputElement>(null);
  const [position, setPosition] = useState<Position | null>(null);
  // Counts keyboard moves: only those move the DOM focus (a click or Tab already did).
  const [focusRequest, setFocusRequest] = useState(0);

  const { data: board, error, live } = useLiveQuery({
    queryKey: ["board", search],
    url: withQuery("/api/v1/board", search),
    schema: boardDto,
    what: "the board",
    initialData: search === initialSearch ? initialBoard : undefined,
    // A partial first paint is stale at once: the whole board is fetched after hydration.
    initialDataUpdatedAt: initialBoard.complete ? undefined : 0,
    keepPrevious: true,
    revalidate: true,
    // The server sends the changed cards for these filters: events refetch nothing (docs/decisions/064-board-deltas.md).
    deltas: { streamUrl: withQuery("/api/v1/stream", "", { board: search }), apply: applyBoardDelta },
    refetchInterval: BOARD_RESYNC_MS,
  });

  const go = useCallback(
    (values: BoardFilterValues, nextView: BoardView, nextSort: ListSort | null = sort) => {
      const next = queryString(values, nextView, nextSort);
      router.replace(next ? `${pathname}?${next}` : pathname, { scroll: false });
      setPosition(null);
    },
    [router, pathname, sort],
  );
  const setFilters = useCallback((values: BoardFilterValues) => go(values, view), [go, view]);

  // Needs you in its groups' order whatever order its cards arrived in: the keyboard's rows are this order.
  const columns = useMemo(
    () => (board?.columns ?? []).map((column) => (column.id === "needs_you" ? { ...column, cards: [...column.cards].sort(compareNeedsYou) } : column)),
    [board],
  );
  const { savedScroll, saveScroll, place } = useBoardReturn(search, columns, position, board?.complete ?? false);
  // The newest first, one per thread, a few at most: a card's own notice leaves with the card.
  const [lostRaces, setLostRaces] = useState<LostRace[]>([]);
  const reportLostRace = useCallback((race: LostRace) => setLostRaces((races) => [race, ...races.filter((known) => known.key !== race.key)].slice(0, 5)), []);
  // Keyboard shortcuts work wherever the focus is on the page (a fresh load leaves it on <body>).
  useDocumentKeys((event) => {
    const target = event.target as HTMLElement;
    const typing = isTextField(target);
    if (event.key === "/" && !typing) {
      event.preventDefault();
      searchRef.current?.focus();
      return;
    }
    if (event.key === "Escape" && typing) {
      // Leave the field with its text: a search input would otherwise clear itself.
      event.preventDefault();
      target.blur();
      return;
    }
    const move = MOVES[event.key];
    // The list is a table: Tab and the browser's own keys move through it.
    if (view === "list") return;
    if (!move || typing || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    const start = place ?? { column: columns.findIndex((column) => column.count > 0), row: 0 };
    if (start.column < 0) return;
    let column = start.column;
    if (move[0] !== 0) {
      // Skip empty columns sideways.
      for (let next = column + move[0]; next >= 0 && next < columns.length; next += move[0]) {
        if (columns[next]!.count > 0) {
          column = next;
          break;
        }
      }
    }
    const count = columns[column]!.count;
    // The first key press lands on the first card; later ones move from where the focus is.
    const row = place ? Math.max(0, Math.min(count - 1, start.row + move[1])) : 0;
    setPosition({ column, row });
    setFocusRequest((count) => count + 1);
  });

  // Ages are measured from when the server made the board, so server and browser render alike.
  const now = Date.parse(board?.generated_at ?? initialBoard.generated_at);
  return (
    <ReportLostRace.Provider value={reportLostRace}>
      <div className="flex h-full min-h-0 flex-col gap-3">
        <div className="flex flex-wrap items-end justify-between gap-3">
          <BoardFilters ref={searchRef} values={filters} onChange={setFilters} />
          <ViewSwitch view={view} onChange={(next) => go(filters, next)} />
          <p className="text-xs text-muted" role="status" aria-live="polite">
            {board ? plural(board.total, "thread") : "loading"} · {describeLive(live)}
          </p>
        </div>
        {error ? <Alert>{error.message}</Alert> : null}
        <LostRaces races={lostRaces} onDismiss={() => setLostRaces([])} />
        {board && board.total === 0 && !search ? (
          <EmptyBoard />
        ) : view === "list" ? (
          <BoardList
            columns={columns}
            now={now}
            canAct={canAct}
            complete={board?.complete ?? false}
            savedScroll={savedScroll.list}
            onScrolled={(offset) => saveScroll("list", offset)}
            sort={sort}
            onSort={(next) => go(filters, "list", next)}
          />
        ) : (
          <div className="flex min-h-0 flex-1 snap-x snap-mandatory gap-3 overflow-x-auto md:snap-none" aria-label="Board" role="group">
            {columns.map((column, index) => (
              <BoardColumn
                key={column.id}
                id={column.id}
                title={column.title}
                count={column.count}
                cards={column.cards}
                now={now}
                focusedRow={place?.column === index ? place.row : null}
                focusRequest={position?.column === index ? focusRequest : 0}
                onFocusRow={(row) => setPosition({ column: index, row })}
                canAct={canAct}
                savedScroll={savedScroll[column.id]}
                onScrolled={(offset) => saveScroll(column.id, offset)}
              />
            ))}
          </div>
        )}
      </div>
    </ReportLostRace.Provider>
  );
}

/** Board or list: two pressed-or-not buttons, the choice kept in the address (?view=list). */
function ViewSwitch({ view, onChange }: { view: BoardView; onChange: (view: BoardView) => void }) {
  return (
    <div role="group" aria-label="View" className="flex rounded-md ring-1 ring-zinc-300 dark:ring-zinc-700">
      {(["board", "list"] as const).map((choice) => (
        <button
          key={choice}
          type="button"
          aria-pressed={view === choice}
          onClick={() => onChange(choice)}
          className="min-h-8 px-3 text-sm capitalize first:rounded-l-md last:rounded-r-md focus-visible:outline-2 focus-visible:outline-focus aria-pressed:bg-sky-700 aria-pressed:text-white"
        >
          {choice}
        </button>
      ))}
    </div>
  );
}
