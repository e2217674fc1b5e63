"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useRef, useState, type FormEvent } from "react";
import { createdTokenSchema, tokenListSchema, tokenSummarySchema, type TokenSummary } from "@/lib/auth/dto";
import { TOKEN_SCOPES, type TokenScope } from "@/lib/auth/token-scopes";
import { sendJson, type SendResult } from "@/lib/browser/send-json";
import {
  buttonClass,
  cardClass,
  dangerButtonClass,
  FormAlert,
  inputClass,
  labelClass,
  localProblem,
  names,
  problemOf,
  secondaryButtonClass,
  type Problem,
} from "@/components/auth/form-parts";

const TOKENS_KEY = ["tokens"] as const;
const LABELS: Record<string, string> = { name: "Name", scopes: "Scopes" };
const DEFAULT_SCOPES: TokenScope[] = ["packets:write"];

async function fetchTokens(): Promise<TokenSummary[]> {
  const response = await fetch("/api/v1/tokens", { headers: { accept: "application/json" }, credentials: "same-origin", cache: "no-store" });
  if (!response.ok) throw new Error(`Baton answered ${response.status} while listing tokens.`);
  return tokenListSchema.parse(await response.json()).tokens;
}

/** A time as the API sends it (ISO, UTC), shown the same on the server and in the browser. */
function When({ iso }: { iso: string }) {
  return <time dateTime={iso}>{`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`}</time>;
}

/** The token admin: the list (never a secret) with revoke, and a form that creates a token and shows it once. */
export function TokensAdmin({ initialTokens }: { initialTokens: TokenSummary[] }) {
  const queryClient = useQueryClient();
  const tokens = useQuery({ queryKey: TOKENS_KEY, queryFn: fetchTokens, initialData: initialTokens });
  const [confirming, setConfirming] = useState<string | null>(null);
  const [rowProblem, setRowProblem] = useState<Problem | null>(null);
  const [revoked, setRevoked] = useState<string | null>(null);
  // After "Cancel", focus goes back to that row's Revoke button.
  const refocus = useRef<string | null>(null);

  const revoke = useMutation<SendResult<TokenSummary>, Error, TokenSummary>({
    mutationFn: (token) => sendJson("DELETE", `/api/v1/tokens/${encodeURIComponent(token.id)}`, undefined, tokenSummarySchema),
    onMutate: () => {
      setRowProblem(null);
      setRevoked(null);
    },
    onSuccess: (result, token) => {
      if (!result.ok) {
        setRowProblem(problemOf(result, {}, `Could not revoke ${token.name}:`));
        return;
      }
      setConfirming(null);
      setRevoked(`Revoked ${token.name}: requests with it are refused from now on.`);
      queryClient.setQueryData<TokenSummary[]>(TOKENS_KEY, (list) => list?.map((row) => (row.id === result.data.id ? result.data : row)));
    },
    onError: (error, token) => setRowProblem(localProblem([], `Could not revoke ${token.name}: ${error.message}`)),
    onSettled: () => queryClient.invalidateQueries({ queryKey: TOKENS_KEY }),
  });

  return (
    <>
      <CreateTokenForm />
      <section aria-labelledby="tokens-heading" className={cardClass}>
        <h2 id="tokens-heading" className="mb-2 text-sm font-semibold tracking-wide text-zinc-600 uppercase dark:text-zinc-400">
          API tokens
        </h2>
        {rowProblem ? (
          <div className="mb-2">
            <FormAlert problem={rowProblem} />
          </div>
        ) : null}
        {revoked ? (
          <p role="status" className="mb-2 text-sm text-emerald-700 dark:text-emerald-400">
            {revoked}
          </p>
        ) : null}
        {tokens.isError ? (
          <p role="alert" className="mb-2 text-sm text-red-700 dark:text-red-400">
            The list could not be refreshed: {tokens.error.message}
          </p>
        ) : null}
        {tokens.data.length === 0 ? (
          <p className="text-sm text-zinc-600 dark:text-zinc-400">No tokens yet. Agents and scripts need one to send packets.</p>
        ) : (
          <div className="overflow-x-auto">
            <table className="w-full text-left text-sm">
              <caption className="sr-only">API tokens</caption>
              <thead className="text-xs text-zinc-600 dark:text-zinc-400">
                <tr>
                  <th scope="col" className="py-1 pr-4 font-medium">Name</th>
                  <th scope="col" className="py-1 pr-4 font-medium">Token</th>
                  <th scope="col" className="py-1 pr-4 font-medium">Scopes</th>
                  <th scope="col" className="py-1 pr-4 font-medium">Created</th>
                  <th scope="col" className="py-1 pr-4 font-medium">Last used</th>
                  <th scope="col" className="py-1 pr-4 font-medium">Revoked</th>
                  <th scope="col" className="py-1 font-medium">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {tokens.data.map((token) => (
                  <tr key={token.id} className="border-t border-zinc-200 dark:border-zinc-800">
                    <th scope="row" className="py-1.5 pr-4 font-medium">
                      {token.name}
                    </th>
                    <td className="py-1.5 pr-4 font-mono text-xs">{token.display}</td>
                    <td className="py-1.5 pr-4">{token.scopes.join(", ")}</td>
                    <td className="py-1.5 pr-4">
                      <When iso={token.created_at} />
                    </td>
                    <td className="py-1.5 pr-4">{token.last_used_at ? <When iso={token.last_used_at} /> : "never"}</td>
                    <td className="py-1.5 pr-4">{token.revoked_at ? <When iso={token.revoked_at} /> : "no"}</td>
                    <td className="py-1.5">
                      {token.revoked_at ? null : confirming === token.id ? (
                        <span className="flex gap-2">
                          <button
                            type="button"
                            autoFocus
                            className={dangerButtonClass}
                            aria-label={`Confirm revoke ${token.name}`}
                            aria-busy={revoke.isPending && revoke.variables?.id === token.id}
                            onClick={() => {
                              if (!revoke.isPending) revoke.mutate(token);
                            }}
                          >
                            Confirm revoke
                          </button>
                          <button
                            type="button"
                            className={secondaryButtonClass}
                            aria-label={`Cancel revoking ${token.name}`}
                            onClick={() => {
                              refocus.current = token.id;
                              setConfirming(null);
                            }}
                          >
                            Cancel
                          </button>
                        </span>
                      ) : (
                        <button
                          type="button"
                          className={secondaryButtonClass}
                          aria-label={`Revoke ${token.name}`}
                          ref={(element) => {
                            if (element && refocus.current === token.id) {
                              refocus.current = null;
                              element.focus();
                            }
                          }}
                          onClick={() => {
                            setRowProblem(null);
                            setConfirming(token.id);
                          }}
                        >
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}

/** Creates a token; its secret lives only in this component's state, so a reload forgets it. */
function CreateTokenForm() {
  const id = useId();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<TokenScope[]>(DEFAULT_SCOPES);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [created, setCreated] = useState<{ token: string; name: string } | null>(null);
  const [copyStatus, setCopyStatus] = useState<string | null>(null);
  const secretRef = useRef<HTMLInputElement>(null);

  const create = useMutation({
    mutationFn: (input: { name: string; scopes: TokenScope[] }) => sendJson("POST", "/api/v1/tokens", input, createdTokenSchema),
    // Only the summary goes into the list (newest first); the secret stays in this form's state.
    onSuccess: (result) => {
      if (result.ok) {
        const { summary } = result.data;
        queryClient.setQueryData<TokenSummary[]>(TOKENS_KEY, (list) => [summary, ...(list ?? []).filter((row) => row.id !== summary.id)]);
      }
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: TOKENS_KEY }),
  });

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setCopyStatus(null);
    if (!name.trim()) {
      setProblem(localProblem(["name"], "Name: give the token a name, such as the agent or machine that will use it."));
      return;
    }
    if (!scopes.length) {
      setProblem(localProblem(["scopes"], "Scopes: pick at least one scope."));
      return;
    }
    setProblem(null);
    setCreated(null);
    let result: Awaited<ReturnType<typeof create.mutateAsync>>;
    try {
      result = await create.mutateAsync({ name, scopes });
    } catch (error) {
      setProblem(localProblem([], error instanceof Error ? error.message : "Creating the token failed."));
      return;
    }
    if (!result.ok) {
      setProblem(problemOf(result, LABELS));
      return;
    }
    setCreated({ token: result.data.token, name: result.data.summary.name });
    setName("");
    setScopes(DEFAULT_SCOPES);
  }

  async function copy() {
    const secret = created?.token;
    if (!secret) return;
    try {
      await navigator.clipboard.writeText(secret);
      setCopyStatus("Copied.");
    } catch {
      // No clipboard access (a page served over plain http on another host): select it for Ctrl+C.
      secretRef.current?.select();
      setCopyStatus("Copying is not allowed here: the token is selected, press Ctrl+C (or ⌘C) to copy it.");
    }
  }

  return (
    <section aria-labelledby={`${id}-heading`} className={cardClass}>
      <h2 id={`${id}-heading`} className="mb-2 text-sm font-semibold tracking-wide text-zinc-600 uppercase dark:text-zinc-400">
        Create a token
      </h2>
      {created ? (
        <div className="mb-4 flex flex-col gap-2 rounded-md bg-amber-50 p-3 ring-1 ring-amber-200 dark:bg-amber-950 dark:ring-amber-900">
          <label htmlFor={`${id}-secret`} className="text-sm font-medium">
            New token for {created.name}
          </label>
          <p id={`${id}-secret-note`} className="text-sm">
            Shown once: copy it now. Baton keeps only a hash.
          </p>
          <div className="flex flex-wrap gap-2">
            <input
              ref={secretRef}
              id={`${id}-secret`}
              readOnly
              autoFocus
              value={created.token}
              onFocus={(event) => event.currentTarget.select()}
              aria-describedby={`${id}-secret-note`}
              spellCheck={false}
              className={`${inputClass} min-w-0 flex-1 font-mono`}
            />
            <button type="button" className={buttonClass} onClick={copy}>
              Copy
            </button>
            <button
              type="button"
              className={secondaryButtonClass}
              onClick={() => {
                setCreated(null);
                setCopyStatus(null);
              }}
            >
              Done
            </button>
          </div>
          <p role="status" className="text-sm">
            {copyStatus}
          </p>
        </div>
      ) : null}
      <form onSubmit={submit} aria-labelledby={`${id}-heading`} className="flex flex-col gap-3" noValidate>
        <FormAlert problem={problem} id={`${id}-alert`} />
        <label className={labelClass}>
          Name
          <input
            name="name"
            value={name}
            onChange={(event) => setName(event.target.value)}
            autoComplete="off"
            maxLength={100}
            className={`${inputClass} max-w-sm`}
            aria-invalid={names(problem, "name")}
            aria-describedby={names(problem, "name") ? `${id}-alert` : undefined}
          />
        </label>
        <fieldset aria-invalid={names(problem, "scopes")} aria-describedby={names(problem, "scopes") ? `${id}-alert` : undefined}>
          <legend className="mb-1 text-xs text-zinc-600 dark:text-zinc-400">Scopes</legend>
          <div className="flex flex-wrap gap-4">
            {TOKEN_SCOPES.map((scope) => (
              <label key={scope} className="flex items-center gap-1.5 text-sm">
                <input
                  type="checkbox"
                  name="scopes"
                  value={scope}
                  checked={scopes.includes(scope)}
                  onChange={(event) =>
                    setScopes((current) => (event.target.checked ? [...current, scope] : current.filter((s) => s !== scope)))
                  }
                  className="focus-visible:outline-2 focus-visible:outline-sky-600"
                />
                <span className="font-mono">{scope}</span>
              </label>
            ))}
          </div>
        </fieldset>
        <div>
          <button type="submit" disabled={create.isPending} className={buttonClass}>
            {create.isPending ? "Creating…" : "Create token"}
          </button>
        </div>
      </form>
    </section>
  );
}
