import type { ReactNode } from "react";
import type { Problem } from "@/lib/browser/problem";
import { Alert, Done, FormAlert } from "@/components/ui/alert";

/** A body cell of an admin table; the row's first cell is its header (`${CELL} font-medium`). */
export const CELL = "py-1.5 pr-4";

/** An admin list's table: a caption for screen readers, the column headings, and a last column for each row's actions. */
export function AdminTable({ caption, headings, children }: { caption: string; headings: readonly string[]; children: ReactNode }) {
  return (
    <div className="overflow-x-auto">
      <table className="w-full text-left text-sm">
        <caption className="sr-only">{caption}</caption>
        <thead className="text-xs text-muted">
          <tr>
            {headings.map((heading) => (
              <th key={heading} scope="col" className="py-1 pr-4 font-medium">
                {heading}
              </th>
            ))}
            <th scope="col" className="py-1 font-medium">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** Above an admin list: what a row action last did or why it failed, and whether the list could not be refreshed. */
export function ListNotices({ problem = null, done = null, refreshError }: { problem?: Problem | null; done?: string | null; refreshError: Error | null }) {
  return (
    <div className="mb-2 flex flex-col gap-2 empty:hidden">
      <FormAlert problem={problem} />
      <Done>{done}</Done>
      {refreshError ? <Alert>The list could not be refreshed: {refreshError.message}</Alert> : null}
    </div>
  );
}
