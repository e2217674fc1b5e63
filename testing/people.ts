import type { Person } from "../lib/auth/roles";
import { createFirstAdmin, createUser } from "../lib/auth/users";

const PASSWORD = "a long enough password";

/** A fresh database's admin and two operators, for tests of what one person does and another may not. */
export async function createTwoOperators(): Promise<{ operator: Person; colleague: Person }> {
  const admin = await createFirstAdmin({ username: "the-admin", password: PASSWORD });
  const asPerson = (user: { id: string; username: string; role: Person["role"] }): Person => ({ id: user.id, username: user.username, role: user.role });
  return {
    operator: asPerson(await createUser(admin, { username: "olga", password: PASSWORD, role: "operator" })),
    colleague: asPerson(await createUser(admin, { username: "colin", password: PASSWORD, role: "operator" })),
  };
}
