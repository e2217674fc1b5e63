import { afterAll, beforeAll } from "vitest";
import type { Person } from "../lib/auth/roles";
import { scheduleWriteBack } from "../lib/human/writeback/write-human-section";
import { createTwoOperators } from "./people";

/**
 * For a test file of human writes (lib/human), after its `freshDatabaseForThisFile()` (which
 * stays in the file: vitest.config.ts reads it to run the file on PostgreSQL too): two
 * operators, handed to `havePeople` before the tests, and the list of threads the file
 * writes. Human writes queue a background write-back per thread; those finish before the
 * database goes.
 */
export function humanWritesSetup(havePeople: (people: { operator: Person; colleague: Person }) => void): string[] {
  const threadsUsed: string[] = [];
  beforeAll(async () => {
    havePeople(await createTwoOperators());
  });
  afterAll(async () => {
    await scheduleWriteBack(threadsUsed);
  });
  return threadsUsed;
}
