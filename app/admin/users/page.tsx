import type { Metadata } from "next";
import { UsersAdmin } from "@/components/admin/users-admin";
import { requirePagePerson } from "@/lib/auth/page-person";
import { PASSWORD_MIN } from "@/lib/auth/passwords";
import { listUsers } from "@/lib/auth/users";

/** When the list was read (ms): ages on the page are measured from it. */
const readAt = () => Date.now();

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Users" };

/** Admin: who can sign in, their roles; add, change or disable people. */
export default async function UsersPage() {
  const me = await requirePagePerson("/admin/users", "admin");
  const users = await listUsers();
  return (
    <>
      <h1 className="text-lg font-semibold">Users</h1>
      <UsersAdmin initialUsers={users} loadedAt={readAt()} me={me} minPasswordLength={PASSWORD_MIN} />
    </>
  );
}
