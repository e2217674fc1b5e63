import "server-only";
import { hash, verify } from "@node-rs/argon2";
import { z } from "zod";

/**
 * Argon2id with OWASP's minimum parameters (19 MiB, 2 passes, 1 lane):
 * about 30 ms a hash here (docs/decisions/013-accounts-and-sessions.md).
 */
// 2 is Algorithm.Argon2id; the package declares it as a const enum, which isolated modules cannot import.
const ARGON2ID = 2;
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;
export const passwordSchema = z
  .string({ error: "password must be a string" })
  .min(PASSWORD_MIN, `password must be at least ${PASSWORD_MIN} characters`)
  .max(PASSWORD_MAX, `password must be at most ${PASSWORD_MAX} characters`);

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

// Verifying against this when the account does not exist keeps sign-in's timing
// from telling which usernames exist.
let decoy: Promise<string> | null = null;
export async function verifyAgainstDecoy(password: string): Promise<false> {
  decoy ??= hashPassword("decoy password that matches nothing");
  await verifyPassword(await decoy, password);
  return false;
}
