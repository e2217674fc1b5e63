/** The board's two views of the same data: columns of cards, or one dense list (?view=list). */
export type BoardView = "board" | "list";

export const viewOf = (params: URLSearchParams): BoardView => (params.get("view") === "list" ? "list" : "board");

/** A board address's query without its view and the list's sort: the page's choices, not the data's. */
export function withoutView(search: string): string {
  const params = new URLSearchParams(search);
  params.delete("view");
  params.delete("sort");
  return params.toString();
}

/** The list view's sort (`?sort=agent`, `?sort=-age`): rows within each group; none keeps the board's order. */
export const LIST_SORT_KEYS = ["severity", "agent", "age"] as const;
export type ListSortKey = (typeof LIST_SORT_KEYS)[number];
export interface ListSort {
  key: ListSortKey;
  descending: boolean;
}

export function listSortOf(params: URLSearchParams): ListSort | null {
  const raw = params.get("sort") ?? "";
  const key = raw.replace(/^-/, "");
  return (LIST_SORT_KEYS as readonly string[]).includes(key) ? { key: key as ListSortKey, descending: raw.startsWith("-") } : null;
}

export const sortParam = (sort: ListSort): string => `${sort.descending ? "-" : ""}${sort.key}`;

/** What a first click on a column sorts by: the most severe, the longest waiting, agents A to Z. */
export const FIRST_DIRECTION: Record<ListSortKey, boolean> = { severity: true, agent: false, age: true };
