"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { userDtoSchema, userListSchema, type UserDto } from "@/lib/auth/dto";
import { ROLES, type Person, type Role } from "@/lib/auth/roles";
import { localProblem, problemOf, type Problem } from "@/lib/browser/problem";
import { addRow, replaceRow } from "@/lib/browser/rows";
import { sendJson, type SendResult } from "@/lib/browser/send-json";
import { Alert, Done, FormAlert } from "@/components/ui/alert";
import { Button, SubmitButton } from "@/components/ui/button";
import { ChoiceSelect, Field, fieldAria, Input } from "@/components/ui/field";
import { Panel } from "@/components/ui/panel";
import { When } from "@/components/ui/time";
import { useAdminList } from "./admin-list";

const USERS_KEY = ["users"] as const;
const LABELS: Record<string, string> = { username: "Username", password: "Password", role: "Role" };


interface UserChange {
  user: UserDto;
  change: { role?: Role; disabled?: boolean };
}

/** The people admin: the list with a role and a disable switch per person, and a form to add someone. */
export function UsersAdmin({ initialUsers, loadedAt, me, minPasswordLength }: { initialUsers: UserDto[]; loadedAt: number; me: Person; minPasswordLength: number }) {
  const queryClient = useQueryClient();
  const users = useAdminList({ queryKey: USERS_KEY, url: "/api/v1/users", schema: userListSchema.transform((list) => list.users), what: "the people", initial: initialUsers, loadedAt });
  const [rowProblem, setRowProblem] = useState<Problem | null>(null);

  const change = useMutation<SendResult<UserDto>, Error, UserChange>({
    mutationFn: ({ user, change }) => sendJson("PATCH", `/api/v1/users/${encodeURIComponent(user.id)}`, change, userDtoSchema),
    onMutate: () => setRowProblem(null),
    onSuccess: (result, { user, change }) => {
      if (!result.ok) {
        setRowProblem(problemOf(result, {}, `Could not change ${user.username}:`));
        return;
      }
      queryClient.setQueryData<UserDto[]>(USERS_KEY, replaceRow(result.data));
      // Someone who takes away their own admin role (or account) can no longer use this page.
      if (user.id === me.id && ((change.role && change.role !== "admin") || change.disabled)) {
        // eslint-disable-next-line @next/next/no-location-assign-relative-destination -- a full navigation: the layout re-reads who is signed in.
        window.location.assign("/");
      }
    },
    onError: (error, { user }) => setRowProblem(localProblem([], `Could not change ${user.username}: ${error.message}`)),
    onSettled: () => queryClient.invalidateQueries({ queryKey: USERS_KEY }),
  });
  const pendingFor = (user: UserDto) => (change.isPending && change.variables?.user.id === user.id ? change.variables.change : null);

  return (
    <>
      <Panel headingId="people-heading" title="People">
        <div className="mb-2 flex flex-col gap-2 empty:hidden">
          <FormAlert problem={rowProblem} />
          {users.isError ? <Alert>The list could not be refreshed: {users.error.message}</Alert> : null}
        </div>
        <div className="overflow-x-auto">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">People who can sign in</caption>
            <thead className="text-xs text-muted">
              <tr>
                <th scope="col" className="py-1 pr-4 font-medium">Username</th>
                <th scope="col" className="py-1 pr-4 font-medium">Role</th>
                <th scope="col" className="py-1 pr-4 font-medium">Created</th>
                <th scope="col" className="py-1 pr-4 font-medium">Disabled</th>
                <th scope="col" className="py-1 font-medium">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {users.data.map((user) => {
                const pending = pendingFor(user);
                return (
                  <tr key={user.id} className="border-t border-line">
                    <th scope="row" className="py-1.5 pr-4 font-medium">
                      {user.username}
                      {user.id === me.id ? <span className="ml-1 text-xs font-normal text-muted">(you)</span> : null}
                    </th>
                    <td className="py-1.5 pr-4">
                      <ChoiceSelect
                        aria-label={`Role of ${user.username}`}
                        choices={ROLES}
                        value={pending?.role ?? user.role}
                        aria-busy={pending !== null}
                        onChoose={(role) => change.mutate({ user, change: { role } })}
                      />
                    </td>
                    <td className="py-1.5 pr-4">
                      <When iso={user.created_at} now={users.dataUpdatedAt} />
                    </td>
                    <td className="py-1.5 pr-4">{user.disabled ? "yes" : "no"}</td>
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
            </tbody>
          </table>
        </div>
      </Panel>
      <AddPersonForm minPasswordLength={minPasswordLength} />
    </>
  );
}

function AddPersonForm({ minPasswordLength }: { minPasswordLength: number }) {
  const id = useId();
  const queryClient = useQueryClient();
  const [problem, setProblem] = useState<Problem | null>(null);
  const [added, setAdded] = useState<string | null>(null);
  const add = useMutation<SendResult<UserDto>, Error, { username: string; password: string; role: Role }>({
    mutationFn: (account) => sendJson("POST", "/api/v1/users", account, userDtoSchema),
    // The answer goes into the list at once; the refetch then brings anyone else's changes.
    onSuccess: (result) => {
      if (result.ok) queryClient.setQueryData<UserDto[]>(USERS_KEY, addRow(result.data));
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: USERS_KEY }),
  });

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    const account = { username: String(form.get("username") ?? ""), password: String(form.get("password") ?? ""), role: String(form.get("role") ?? "viewer") as Role };
    setAdded(null);
    if (account.password.length < minPasswordLength) {
      setProblem(localProblem(["password"], `Password: use at least ${minPasswordLength} characters.`));
      return;
    }
    setProblem(null);
    let result: SendResult<UserDto>;
    try {
      result = await add.mutateAsync(account);
    } catch (error) {
      setProblem(localProblem([], error instanceof Error ? error.message : "Adding failed."));
      return;
    }
    if (!result.ok) {
      setProblem(problemOf(result, LABELS));
      return;
    }
    formElement.reset();
    setAdded(`Added ${result.data.username} (${result.data.role}).`);
  }

  const alertId = `${id}-alert`;
  const hintId = `${id}-password-hint`;
  return (
    <Panel headingId={`${id}-heading`} title="Add a person">
      <form onSubmit={submit} aria-labelledby={`${id}-heading`} className="flex flex-col gap-3" noValidate>
        <FormAlert problem={problem} id={alertId} />
        <Done>{added}</Done>
        <div className="flex flex-wrap items-end gap-3">
          <Field label="Username">
            <Input name="username" autoComplete="off" autoCapitalize="none" spellCheck={false} {...fieldAria(problem, "username", alertId)} />
          </Field>
          <Field label="Password">
            <Input name="password" type="password" autoComplete="new-password" {...fieldAria(problem, "password", alertId, hintId)} />
          </Field>
          <Field label="Role">
            <ChoiceSelect name="role" defaultValue="viewer" choices={ROLES} {...fieldAria(problem, "role", alertId)} />
          </Field>
          <SubmitButton pending={add.isPending} pendingLabel="Adding…">Add person</SubmitButton>
        </div>
        <p id={hintId} className="text-xs text-muted">
          Passwords have at least {minPasswordLength} characters. Viewers see everything; operators also act on threads; admins also manage people and tokens.
        </p>
      </form>
    </Panel>
  );
}
