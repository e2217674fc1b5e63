/** A ledger event as the notifier reads it (docs/decisions/018-webhooks.md). */
export interface LedgerRow {
  seq: number;
  at: Date;
  kind: string;
  threadKey: string | null;
  versionId: string | null;
  data: string;
}

/** An event's data, or {} when it is not a JSON object: a bad row announces nothing. */
export function eventData(text: string): Record<string, unknown> {
  try {
    const data: unknown = JSON.parse(text);
    return data && typeof data === "object" ? (data as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
