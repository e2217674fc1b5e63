"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import { fetchParsed } from "@/lib/browser/fetch-parsed";
import { deliveryPageDto, type DeliveryPageDto, type WebhookDto } from "@/lib/notify/dto";
import { AgentText } from "@/components/ui/agent-text";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { When } from "@/components/ui/time";

const COLUMNS = ["Created", "Event", "Thread", "Status", "Attempts", "Last HTTP status", "Last error"];
const CELL = "py-1 pr-3";

/** A webhook's delivery log, newest first, a page at a time. */
export function DeliveryLog({ webhook }: { webhook: WebhookDto }) {
  const log = useInfiniteQuery({
    queryKey: ["webhook-deliveries", webhook.id],
    initialPageParam: null as string | null,
    queryFn: ({ pageParam }) =>
      fetchParsed(
        `/api/v1/webhooks/${encodeURIComponent(webhook.id)}/deliveries${pageParam ? `?before=${encodeURIComponent(pageParam)}` : ""}`,
        deliveryPageDto,
        "the deliveries",
      ),
    getNextPageParam: (page: DeliveryPageDto) => page.next_before,
  });
  const rows = log.data?.pages.flatMap((page) => page.deliveries) ?? [];
  return (
    <section aria-label={`Deliveries of ${webhook.name}`}>
      <div className="mb-1 flex items-center gap-2">
        <h4 className="text-sm font-medium">Deliveries</h4>
        <Button onClick={() => log.refetch()} disabled={log.isFetching}>
          {log.isFetching ? "Refreshing…" : "Refresh"}
        </Button>
      </div>
      {log.isError ? (
        <Alert>{log.error.message}</Alert>
      ) : log.isPending ? (
        <p className="text-sm text-muted">Loading…</p>
      ) : rows.length === 0 ? (
        <p className="text-sm text-muted">Nothing sent yet.</p>
      ) : (
        <div className="overflow-x-auto">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">Deliveries of {webhook.name}, newest first</caption>
            <thead className="text-xs text-muted">
              <tr>
                {COLUMNS.map((column) => (
                  <th key={column} scope="col" className={`${CELL} font-medium`}>
                    {column}
                  </th>
                ))}
                <th scope="col" className="py-1 font-medium">
                  Delivered or next attempt
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((delivery) => (
                <tr key={delivery.id} className="border-t border-line align-top">
                  <td className={`${CELL} whitespace-nowrap`}>
                    <When iso={delivery.created_at} now={log.dataUpdatedAt} />
                  </td>
                  <td className={`${CELL} font-mono text-xs`}>{delivery.event}</td>
                  <td className={`${CELL} font-mono text-xs break-all`}>{delivery.thread_key ? <AgentText text={delivery.thread_key} /> : "—"}</td>
                  <td className={CELL}>{delivery.status}</td>
                  <td className={CELL}>{delivery.attempts}</td>
                  <td className={CELL}>{delivery.last_status ?? "—"}</td>
                  <td className={`${CELL} break-words`}>{delivery.last_error ?? "—"}</td>
                  <td className="py-1 whitespace-nowrap">
                    {delivery.delivered_at ? (
                      <When iso={delivery.delivered_at} now={log.dataUpdatedAt} />
                    ) : delivery.next_attempt_at ? (
                      <>
                        next <When iso={delivery.next_attempt_at} now={log.dataUpdatedAt} />
                      </>
                    ) : (
                      "—"
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {log.hasNextPage ? (
        <Button className="mt-2" onClick={() => log.fetchNextPage()} disabled={log.isFetchingNextPage}>
          {log.isFetchingNextPage ? "Loading…" : "Older deliveries"}
        </Button>
      ) : null}
    </section>
  );
}
