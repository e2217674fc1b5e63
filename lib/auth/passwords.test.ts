import { describe, expect, it } from "vitest";
import { hashPassword, PASSWORD_MAX, PASSWORD_MIN, passwordSchema, verifyAgainstDecoy, verifyPassword } from "./passwords";

const PASSWORD = "correct horse battery staple";

describe("hashPassword", () => {
  it("produces an Argon2id PHC string with OWASP's minimum parameters", async () => {
    const hash = await hashPassword(PASSWORD);
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    expect(hash).not.toContain(PASSWORD);
  });

  it("salts every hash: the same password hashes differently each time", async () => {
    const [a, b] = await Promise.all([hashPassword(PASSWORD), hashPassword(PASSWORD)]);
    expect(a).not.toBe(b);
    expect(await verifyPassword(a, PASSWORD)).toBe(true);
    expect(await verifyPassword(b, PASSWORD)).toBe(true);
  });
});

describe("verifyPassword", () => {
  it("is true for the right password and false for any other", async () => {
    const hash = await hashPassword(PASSWORD);
    expect(await verifyPassword(hash, PASSWORD)).toBe(true);
    for (const wrong of ["correct horse battery stapl", "Correct horse battery staple", `${PASSWORD} `, ""]) {
      expect(await verifyPassword(hash, wrong), JSON.stringify(wrong)).toBe(false);
    }
  });

  it("is false, not an exception, for a malformed or foreign hash", async () => {
    const hash = await hashPassword(PASSWORD);
    for (const malformed of ["", "not a hash", "$argon2id$", hash.slice(0, -10), "$2b$10$abcdefghijklmnopqrstuv"]) {
      await expect(verifyPassword(malformed, PASSWORD), JSON.stringify(malformed)).resolves.toBe(false);
    }
  });
});

describe("verifyAgainstDecoy", () => {
  it("is always false, even for the decoy's own words", async () => {
    expect(await verifyAgainstDecoy(PASSWORD)).toBe(false);
    expect(await verifyAgainstDecoy("decoy password that matches nothing")).toBe(false);
  });
});

describe("passwordSchema", () => {
  const problemOf = (value: unknown) => {
    const result = passwordSchema.safeParse(value);
    return result.success ? null : result.error.issues.map((issue) => issue.message);
  };

  it("accepts 12 to 256 characters", () => {
    expect([PASSWORD_MIN, PASSWORD_MAX]).toEqual([12, 256]);
    expect(problemOf("a".repeat(12))).toBeNull();
    expect(problemOf("a".repeat(256))).toBeNull();
  });

  it("refuses 11 or 257 characters and non-strings, saying why", () => {
    expect(problemOf("a".repeat(11))).toEqual(["password must be at least 12 characters"]);
    expect(problemOf("a".repeat(257))).toEqual(["password must be at most 256 characters"]);
    expect(problemOf(123456789012)).toEqual(["password must be a string"]);
    expect(problemOf(undefined)).toEqual(["password must be a string"]);
  });
});
