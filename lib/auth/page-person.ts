import "server-only";
import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { cache } from "react";
import { hasRole, type Person, type Role } from "./roles";
import { personOfSession, SESSION_COOKIE } from "./sessions";
import { hasAnyUser } from "./users";

/** The signed-in person of the page being rendered, or null (read once per request). */
export const currentPagePerson = cache(async (): Promise<Person | null> => personOfSession((await cookies()).get(SESSION_COOKIE)?.value));

/**
 * Every page calls this first: a fresh install goes to the first-run page,
 * anyone not signed in to the sign-in page (coming back to `path` after), and
 * a person without `role` gets a 403-like page (thrown, rendered by the page's error boundary).
 */
export async function requirePagePerson(path: string, role: Role = "viewer"): Promise<Person> {
  const person = await currentPagePerson();
  if (!person) {
    if (!(await hasAnyUser())) redirect("/setup");
    redirect(`/sign-in?next=${encodeURIComponent(path)}`);
  }
  if (!hasRole(person.role, role)) redirect(`/?denied=${encodeURIComponent(role)}`);
  return person;
}

export { safeNextPath } from "./safe-next-path";
