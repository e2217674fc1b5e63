"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { sendJson } from "@/lib/browser/send-json";
import { humanStateDto } from "@/lib/human/dto";
import type { BoardCardDto } from "@/lib/board/dto";

/** How many threads one bulk approve may take: each is one request, and a person checks what each answered. */
export const BULK_APPROVE_MAX = 100;

export type BulkOutcome = { key: string; name: string } & ({ state: "approved" } | { state: "conflict" | "error"; message: string });

export type BulkStatus = { state: "idle" } | { state: "sending"; done: number; of: number } | { state: "done"; outcomes: BulkOutcome[] };

/**
 * Approves threads one request each, through the same endpoint as a card's Approve: the server
 * authorises every thread and refuses (409) one that moved on since the person saw it, so each
 * thread gets its own outcome. Sent one after another: a fleet's approvals need no burst.
 */
export function useBulkApprove() {
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<BulkStatus>({ state: "idle" });

  async function approve(cards: BoardCardDto[]) {
    const outcomes: BulkOutcome[] = [];
    setStatus({ state: "sending", done: 0, of: cards.length });
    for (const card of cards) {
      const name = card.agent ?? card.key;
      const body = { kind: "approved", packet_id: card.active_packet.id, base_revision: card.active_packet.human.revision };
      const result = await sendJson("POST", `/api/v1/threads/${encodeURIComponent(card.key)}/decision`, body, humanStateDto);
      if (result.ok) outcomes.push({ key: card.key, name, state: "approved" });
      else outcomes.push({ key: card.key, name, state: result.code === "conflict" ? "conflict" : "error", message: result.message });
      setStatus({ state: "sending", done: outcomes.length, of: cards.length });
    }
    setStatus({ state: "done", outcomes });
    void queryClient.invalidateQueries({ queryKey: ["board"] });
  }

  return { status, approve, reset: () => setStatus({ state: "idle" }) };
}
