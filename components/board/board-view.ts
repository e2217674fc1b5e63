/** The board's two views of the same data: columns of cards, or one dense list (?view=list). */
export type BoardView = "board" | "list";

export const viewOf = (params: URLSearchParams): BoardView => (params.get("view") === "list" ? "list" : "board");

/** A board address's query without its view: the view is the page's choice, not the data's. */
export function withoutView(search: string): string {
  const params = new URLSearchParams(search);
  params.delete("view");
  return params.toString();
}
