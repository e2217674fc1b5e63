/**
 * Soaks (the 5,000-body fuzz, the overload and crash-safety runs) have two lengths:
 * `npm test` runs the short form, and `npm run test:soak` (BATON_SOAK=full) the full
 * one, by hand and before each benchmark report. Each soak's own knob, when set, wins.
 */
export const FULL_SOAK = process.env.BATON_SOAK === "full";

/** `full` in a full soak, else `short`. */
export const soakSize = (short: number, full: number): number => (FULL_SOAK ? full : short);
