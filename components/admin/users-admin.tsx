"use client";

import { useState, type FormEvent } from "react";
import { userDtoSchema, type UserDto } from "@/lib/auth/dto";
import { ROLES, type Person, type Role } from "@/lib/auth/roles";
import { localProblem, type Problem } from "@/lib/browser/problem";
import { replaceRow } from "@/lib/browser/rows";
import { sendJson } from "@/lib/browser/send-json";
import { Done } from "@/components/ui/alert";
import { Button, SubmitButton } from "@/components/ui/button";
import { ChoiceSelect, Field, Input } from "@/components/ui/field";
import { FormPanel } from "@/components/ui/form-panel";
import { Panel } from "@/components/ui/panel";
import { When } from "@/components/ui/time";
import { useAddForm, useAdminList, useRowAction, USERS } from "./admin-list";
import { AdminTable, CELL, ListNotices } from "./admin-table";

const LABELS: Record<string, string> = { username: "Username", password: "Password", role: "Role" };

interface UserChange {
  user: UserDto;
  change: { role?: Role; disabled?: boolean };
}

/** The people admin: the list with a role and a disable switch per person, and a form to add someone. */
export function UsersAdmin({ initialUsers, loadedAt, me, minPasswordLength }: { initialUsers: UserDto[]; loadedAt: number; me: Person; minPasswordLength: number }) {
  const users = useAdminList(USERS, initialUsers, loadedAt);
  const [rowProblem, setRowProblem] = useState<Problem | null>(null);

  const change = useRowAction({
    resource: USERS,
    send: ({ user, change }: UserChange) => sendJson("PATCH", `${USERS.url}/${encodeURIComponent(user.id)}`, change, userDtoSchema),
    failed: ({ user }) => `Could not change ${user.username}`,
    onProblem: setRowProblem,
    update: (user) => replaceRow(user),
    onDone: (_, { user, change }) => {
      // Someone who takes away their own admin role (or account) can no longer use this page.
      if (user.id === me.id && ((change.role && change.role !== "admin") || change.disabled)) {
        // eslint-disable-next-line @next/next/no-location-assign-relative-destination -- a full navigation: the layout re-reads who is signed in.
        window.location.assign("/");
      }
    },
  });
  const pendingFor = (user: UserDto) => (change.isPending && change.variables?.user.id === user.id ? change.variables.change : null);

  return (
    <>
      <Panel headingId="people-heading" title="People">
        <ListNotices problem={rowProblem} refreshError={users.error} />
        <AdminTable caption="People who can sign in" headings={["Username", "Role", "Created", "Disabled"]}>
          {users.data.map((user) => {
            const pending = pendingFor(user);
            return (
              <tr key={user.id} className="border-t border-line">
                <th scope="row" className={`${CELL} font-medium`}>
                  {user.username}
                  {user.id === me.id ? <span className="ml-1 text-xs font-normal text-muted">(you)</span> : null}
                </th>
                <td className={CELL}>
                  <ChoiceSelect
                    aria-label={`Role of ${user.username}`}
                    choices={ROLES}
                    value={pending?.role ?? user.role}
                    aria-busy={pending !== null}
                    onChoose={(role) => change.mutate({ user, change: { role } })}
                  />
                </td>
                <td className={CELL}>
                  <When iso={user.created_at} now={users.dataUpdatedAt} />
                </td>
                <td className={CELL}>{user.disabled ? "yes" : "no"}</td>
                <td className="py-1.5">
                  <Button
                    aria-label={`${user.disabled ? "Enable" : "Disable"} ${user.username}`}
                    aria-busy={pending !== null}
                    onClick={() => change.mutate({ user, change: { disabled: !user.disabled } })}
                  >
                    {user.disabled ? "Enable" : "Disable"}
                  </Button>
                </td>
              </tr>
            );
          })}
        </AdminTable>
      </Panel>
      <AddPersonForm minPasswordLength={minPasswordLength} />
    </>
  );
}

function AddPersonForm({ minPasswordLength }: { minPasswordLength: number }) {
  const [added, setAdded] = useState<string | null>(null);
  const { form, add, pending } = useAddForm({
    resource: USERS,
    labels: LABELS,
    send: (account: { username: string; password: string; role: Role }) => sendJson("POST", USERS.url, account, userDtoSchema),
    rowOf: (user) => user,
    failed: "Adding failed.",
  });
  const hintId = `${form.id}-password-hint`;

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const values = new FormData(formElement);
    const account = { username: String(values.get("username") ?? ""), password: String(values.get("password") ?? ""), role: String(values.get("role") ?? "viewer") as Role };
    setAdded(null);
    if (account.password.length < minPasswordLength) {
      form.setProblem(localProblem(["password"], `Password: use at least ${minPasswordLength} characters.`));
      return;
    }
    const user = await add(account);
    if (!user) return;
    formElement.reset();
    setAdded(`Added ${user.username} (${user.role}).`);
  }

  return (
    <FormPanel form={form} title="Add a person" onSubmit={submit}>
      <Done>{added}</Done>
      <div className="flex flex-wrap items-end gap-3">
        <Field label="Username">
          <Input name="username" autoComplete="off" autoCapitalize="none" spellCheck={false} {...form.aria("username")} />
        </Field>
        <Field label="Password">
          <Input name="password" type="password" autoComplete="new-password" {...form.aria("password", hintId)} />
        </Field>
        <Field label="Role">
          <ChoiceSelect name="role" defaultValue="viewer" choices={ROLES} {...form.aria("role")} />
        </Field>
        <SubmitButton pending={pending} pendingLabel="Adding…">Add person</SubmitButton>
      </div>
      <p id={hintId} className="text-xs text-muted">
        Passwords have at least {minPasswordLength} characters. Viewers see everything; operators also act on threads; admins also manage people and tokens.
      </p>
    </FormPanel>
  );
}
