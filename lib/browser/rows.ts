/** Cache updates for the admin lists: the server's answer goes into the list at once, the refetch then confirms it. */
interface Row {
  id: string;
}

/** `row` in place of the row with its id. */
export const replaceRow =
  <T extends Row>(row: T) =>
  (list: T[] | undefined): T[] | undefined =>
    list?.map((entry) => (entry.id === row.id ? row : entry));

/** The list without the row `id`. */
export const removeRow =
  <T extends Row>(id: string) =>
  (list: T[] | undefined): T[] | undefined =>
    list?.filter((entry) => entry.id !== id);

/** `row` added at the end (or first), once. */
export const addRow =
  <T extends Row>(row: T, at: "first" | "last" = "last") =>
  (list: T[] | undefined): T[] => {
    const others = (list ?? []).filter((entry) => entry.id !== row.id);
    return at === "first" ? [row, ...others] : [...others, row];
  };
