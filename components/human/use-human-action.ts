"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { sendJson } from "@/lib/browser/send-json";
import { conflictDetailsDto, humanStateDto, type HumanStateDto } from "@/lib/human/dto";

export type ActionStatus =
  | { state: "idle" }
  | { state: "sending" }
  | { state: "error"; message: string }
  /** The write was refused: `current` is the state now; sending again bases the write on it. */
  | { state: "conflict"; message: string; current: HumanStateDto | null };

/**
 * Sends one human action for a thread (decision or answers) based on what the
 * person saw, and refreshes what shows it: the board's data and the page.
 */
export function useHumanAction(
  threadKey: string,
  endpoint: "decision" | "answers",
  /** Told of a refused write too: a board whose card moves away with its own notice keeps one. */
  onConflict?: (current: HumanStateDto | null) => void,
) {
  const queryClient = useQueryClient();
  const router = useRouter();
  const [status, setStatus] = useState<ActionStatus>({ state: "idle" });

  async function send(body: Record<string, unknown>): Promise<boolean> {
    setStatus({ state: "sending" });
    const result = await sendJson("POST", `/api/v1/threads/${encodeURIComponent(threadKey)}/${endpoint}`, body, humanStateDto);
    if (result.ok) {
      setStatus({ state: "idle" });
      void queryClient.invalidateQueries({ queryKey: ["board"] });
      router.refresh();
      return true;
    }
    if (result.code === "conflict") {
      const details = conflictDetailsDto.safeParse(result.details);
      const current = details.success ? (details.data.current[0] ?? null) : null;
      setStatus({ state: "conflict", message: result.message, current });
      onConflict?.(current);
      void queryClient.invalidateQueries({ queryKey: ["board"] });
      router.refresh();
      return false;
    }
    setStatus({ state: "error", message: result.message });
    return false;
  }

  return { status, send, reset: () => setStatus({ state: "idle" }) };
}
