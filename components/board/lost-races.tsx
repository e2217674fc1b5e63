"use client";

import { createContext } from "react";
import { describeHumanSection } from "@/components/human/human-state-line";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import type { HumanStateDto } from "@/lib/human/dto";
import { ThreadOutcomes } from "./thread-outcomes";

/** A person's approve or intervene the server refused: someone acted first, or a newer packet arrived. */
export interface LostRace {
  key: string;
  name: string;
  /** The thread's state now, as the refusal told it (null when it did not). */
  current: HumanStateDto | null;
  /** The version the person acted on. */
  packetId: string;
}

/** How a card tells the board of a lost race: the card may move to another column and take its own notice with it. */
export const ReportLostRace = createContext<((race: LostRace) => void) | null>(null);

/** What happened, in words: the thread's state now, and whether a newer packet took the place of the one acted on. */
function whatHappened(race: LostRace): string {
  if (!race.current) return "the thread changed before your action arrived; nothing was written.";
  const newer = race.current.packet_id !== race.packetId ? "a newer packet arrived; " : "";
  return `nothing was written: ${newer}now ${describeHumanSection(race.current.human)}.`;
}

/** The board's notice of lost races, above the columns, until dismissed. */
export function LostRaces({ races, onDismiss }: { races: LostRace[]; onDismiss: () => void }) {
  if (!races.length) return null;
  return (
    <Alert tone="warning" className="space-y-1">
      <p className="font-medium">Someone got there first</p>
      <ThreadOutcomes className="space-y-0.5" outcomes={races.map((race) => ({ ...race, said: `${whatHappened(race)} Open it to act on what it is now.` }))} />
      <Button variant="link" onClick={onDismiss}>
        Dismiss
      </Button>
    </Alert>
  );
}
