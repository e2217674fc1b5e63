"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { userDtoSchema, userListSchema, type UserDto } from "@/lib/auth/dto";
import { ROLES, type Person, type Role } from "@/lib/auth/roles";
import { sendJson, type SendResult } from "@/lib/browser/send-json";
import {
  buttonClass,
  cardClass,
  FormAlert,
  inputClass,
  labelClass,
  localProblem,
  names,
  problemOf,
  secondaryButtonClass,
  type Problem,
} from "@/components/auth/form-parts";

const USERS_KEY = ["users"] as const;
const LABELS: Record<string, string> = { username: "Username", password: "Password", role: "Role" };

async function fetchUsers(): Promise<UserDto[]> {
  const response = await fetch("/api/v1/users", { headers: { accept: "application/json" }, credentials: "same-origin", cache: "no-store" });
  if (!response.ok) throw new Error(`Baton answered ${response.status} while listing people.`);
  return userListSchema.parse(await response.json()).users;
}

/** A time as the API sends it (ISO, UTC), shown the same on the server and in the browser. */
function When({ iso }: { iso: string }) {
  return <time dateTime={iso}>{`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`}</time>;
}

interface UserChange {
  user: UserDto;
  change: { role?: Role; disabled?: boolean };
}

/** The people admin: the list with a role and a disable switch per person, and a form to add someone. */
export function UsersAdmin({ initialUsers, me, minPasswordLength }: { initialUsers: UserDto[]; me: Person; minPasswordLength: number }) {
  const queryClient = useQueryClient();
  const users = useQuery({ queryKey: USERS_KEY, queryFn: fetchUsers, initialData: initialUsers });
  const [rowProblem, setRowProblem] = useState<Problem | null>(null);

  const change = useMutation<SendResult<UserDto>, Error, UserChange>({
    mutationFn: ({ user, change }) => sendJson("PATCH", `/api/v1/users/${encodeURIComponent(user.id)}`, change, userDtoSchema),
    onMutate: () => setRowProblem(null),
    onSuccess: (result, { user, change }) => {
      if (!result.ok) {
        setRowProblem(problemOf(result, {}, `Could not change ${user.username}:`));
        return;
      }
      queryClient.setQueryData<UserDto[]>(USERS_KEY, (list) => list?.map((row) => (row.id === result.data.id ? result.data : row)));
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
      <section aria-labelledby="people-heading" className={cardClass}>
        <h2 id="people-heading" className="mb-2 text-sm font-semibold tracking-wide text-zinc-600 uppercase dark:text-zinc-400">
          People
        </h2>
        {rowProblem ? (
          <div className="mb-2">
            <FormAlert problem={rowProblem} />
          </div>
        ) : null}
        {users.isError ? (
          <p role="alert" className="mb-2 text-sm text-red-700 dark:text-red-400">
            The list could not be refreshed: {users.error.message}
          </p>
        ) : null}
        <div className="overflow-x-auto">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">People who can sign in</caption>
            <thead className="text-xs text-zinc-600 dark:text-zinc-400">
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
                  <tr key={user.id} className="border-t border-zinc-200 dark:border-zinc-800">
                    <th scope="row" className="py-1.5 pr-4 font-medium">
                      {user.username}
                      {user.id === me.id ? <span className="ml-1 text-xs font-normal text-zinc-500 dark:text-zinc-400">(you)</span> : null}
                    </th>
                    <td className="py-1.5 pr-4">
                      <select
                        aria-label={`Role of ${user.username}`}
                        className={inputClass}
                        value={pending?.role ?? user.role}
                        aria-busy={pending !== null}
                        onChange={(event) => change.mutate({ user, change: { role: event.target.value as Role } })}
                      >
                        {ROLES.map((role) => (
                          <option key={role} value={role}>
                            {role}
                          </option>
                        ))}
                      </select>
                    </td>
                    <td className="py-1.5 pr-4">
                      <When iso={user.created_at} />
                    </td>
                    <td className="py-1.5 pr-4">{user.disabled ? "yes" : "no"}</td>
                    <td className="py-1.5">
                      <button
                        type="button"
                        className={secondaryButtonClass}
                        aria-label={`${user.disabled ? "Enable" : "Disable"} ${user.username}`}
                        aria-busy={pending !== null}
                        onClick={() => change.mutate({ user, change: { disabled: !user.disabled } })}
                      >
                        {user.disabled ? "Enable" : "Disable"}
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      </section>
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
      if (result.ok) queryClient.setQueryData<UserDto[]>(USERS_KEY, (list) => [...(list ?? []).filter((row) => row.id !== result.data.id), result.data]);
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

  const describe = (field: string) => (names(problem, field) ? `${id}-alert` : undefined);
  return (
    <section aria-labelledby={`${id}-heading`} className={cardClass}>
      <h2 id={`${id}-heading`} className="mb-2 text-sm font-semibold tracking-wide text-zinc-600 uppercase dark:text-zinc-400">
        Add a person
      </h2>
      <form onSubmit={submit} aria-labelledby={`${id}-heading`} className="flex flex-col gap-3" noValidate>
        <FormAlert problem={problem} id={`${id}-alert`} />
        {added ? (
          <p role="status" className="text-sm text-emerald-700 dark:text-emerald-400">
            {added}
          </p>
        ) : null}
        <div className="flex flex-wrap items-end gap-3">
          <label className={labelClass}>
            Username
            <input
              name="username"
              autoComplete="off"
              autoCapitalize="none"
              spellCheck={false}
              className={inputClass}
              aria-invalid={names(problem, "username")}
              aria-describedby={describe("username")}
            />
          </label>
          <label className={labelClass}>
            Password
            <input
              name="password"
              type="password"
              autoComplete="new-password"
              className={inputClass}
              aria-invalid={names(problem, "password")}
              aria-describedby={describe("password") ?? `${id}-password-hint`}
            />
          </label>
          <label className={labelClass}>
            Role
            <select name="role" defaultValue="viewer" className={inputClass} aria-invalid={names(problem, "role")}>
              {ROLES.map((role) => (
                <option key={role} value={role}>
                  {role}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={add.isPending} className={buttonClass}>
            {add.isPending ? "Adding…" : "Add person"}
          </button>
        </div>
        <p id={`${id}-password-hint`} className="text-xs text-zinc-500 dark:text-zinc-400">
          Passwords have at least {minPasswordLength} characters. Viewers see everything; operators also act on threads; admins also manage people and tokens.
        </p>
      </form>
    </section>
  );
}
