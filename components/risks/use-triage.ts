"use client";

import { useRef, useState } from "react";
import { sendJson } from "@/lib/browser/send-json";
import { triageResultDto, type RiskGroupDto, type TriageRequestAction } from "@/lib/views/risks/dto";

export type TriageAction = Exclude<TriageRequestAction, "untriaged">;

const DONE: Record<TriageAction, string> = { acknowledged: "Acknowledged", resolved: "Resolved", snoozed: "Snoozed" };
export const risksWord = (count: number) => `${count} risk${count === 1 ? "" : "s"}`;

/**
 * Sends a triage (acknowledge, resolve, snooze) for risks, once at a time: two quick key
 * presses come before a re-render, and the second must not send the action again.
 * `onDone` runs after the list was reloaded.
 */
export function useTriage({ reload, onDone }: { reload: () => Promise<unknown>; onDone: (announcement: string) => void }) {
  const [pending, setPending] = useState(false);
  const [alert, setAlert] = useState<string | null>(null);
  const inFlight = useRef(false);

  const act = async (groups: RiskGroupDto[], action: TriageAction, snoozedUntil?: string | null) => {
    if (inFlight.current || groups.length === 0) return;
    inFlight.current = true;
    const targets = groups.flatMap((group) => group.threads.map((thread) => ({ thread_key: thread.thread_key, fingerprint: group.fingerprint })));
    setPending(true);
    setAlert(null);
    try {
      const body = action === "snoozed" ? { action, targets, snoozed_until: snoozedUntil ?? null } : { action, targets };
      const result = await sendJson("POST", "/api/v1/risks/triage", body, triageResultDto);
      if (!result.ok) {
        setAlert(result.message);
        // A newer packet may have dropped a risk: show what is there now.
        if (result.status === 400) void reload();
        return;
      }
      const announcement = `${DONE[action]} ${risksWord(groups.length)}.`;
      await reload();
      onDone(announcement);
    } catch {
      setAlert("Baton's answer could not be read; reload the page to see whether the risks were triaged.");
    } finally {
      inFlight.current = false;
      setPending(false);
    }
  };

  return { act, pending, alert };
}
