import { expect } from "vitest";
import { BatonError } from "../lib/core/errors";

/** Awaits `promise`, expects it to reject with a BatonError of `code`, and returns that error. */
export async function expectBatonError(promise: Promise<unknown>, code: string): Promise<BatonError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(BatonError);
  expect((error as BatonError).code).toBe(code);
  return error as BatonError;
}
