"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { createdTokenSchema, type TokenSummary } from "@/lib/auth/dto";
import { TOKEN_SCOPES, type TokenScope } from "@/lib/auth/token-scopes";
import { localProblem, problemOf, type Problem } from "@/lib/browser/problem";
import { addRow } from "@/lib/browser/rows";
import { sendJson } from "@/lib/browser/send-json";
import { FormAlert } from "@/components/ui/alert";
import { SubmitButton } from "@/components/ui/button";
import { CheckboxGroup, Field, fieldAria, Input } from "@/components/ui/field";
import { Panel } from "@/components/ui/panel";
import { ShownOnce } from "./shown-once";

export const TOKENS_KEY = ["tokens"] as const;
const LABELS: Record<string, string> = { name: "Name", scopes: "Scopes", project: "Project" };
const DEFAULT_SCOPES: TokenScope[] = ["packets:write"];

/** Creates a token; its secret lives only in this component's state, so a reload forgets it. */
export function CreateTokenForm() {
  const id = useId();
  const alertId = `${id}-alert`;
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<TokenScope[]>(DEFAULT_SCOPES);
  const [project, setProject] = useState("");
  const [problem, setProblem] = useState<Problem | null>(null);
  const [created, setCreated] = useState<{ token: string; name: string } | null>(null);

  const create = useMutation({
    mutationFn: (input: { name: string; scopes: TokenScope[]; project?: string }) => sendJson("POST", "/api/v1/tokens", input, createdTokenSchema),
    // Only the summary goes into the list (newest first); the secret stays in this form's state.
    onSuccess: (result) => {
      if (result.ok) queryClient.setQueryData<TokenSummary[]>(TOKENS_KEY, addRow(result.data.summary, "first"));
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: TOKENS_KEY }),
  });

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!name.trim()) return setProblem(localProblem(["name"], "Name: give the token a name, such as the agent or machine that will use it."));
    if (!scopes.length) return setProblem(localProblem(["scopes"], "Scopes: pick at least one scope."));
    setProblem(null);
    setCreated(null);
    let result: Awaited<ReturnType<typeof create.mutateAsync>>;
    try {
      // Blank leaves the token unbound (docs/decisions/056-project-bound-tokens.md); the server checks the name.
      result = await create.mutateAsync({ name, scopes, ...(project.trim() ? { project } : {}) });
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
    setProject("");
  }

  return (
    <Panel headingId={`${id}-heading`} title="Create a token">
      {created ? (
        <ShownOnce label={`New token for ${created.name}`} note="Shown once: copy it now. Baton keeps only a hash." secret={created.token} what="token" onDone={() => setCreated(null)} />
      ) : null}
      <form onSubmit={submit} aria-labelledby={`${id}-heading`} className="flex flex-col gap-3" noValidate>
        <FormAlert problem={problem} id={alertId} />
        <Field label="Name">
          <Input name="name" value={name} onChange={(event) => setName(event.target.value)} autoComplete="off" maxLength={100} className="max-w-sm" {...fieldAria(problem, "name", alertId)} />
        </Field>
        <Field label="Project (optional)" hint="Binds the token to one project: its packets without a project take this one, and it writes only this project's threads. Leave blank for any project." hintId={`${id}-project-hint`}>
          <Input name="project" value={project} onChange={(event) => setProject(event.target.value)} autoComplete="off" className="max-w-sm" {...fieldAria(problem, "project", alertId, `${id}-project-hint`)} />
        </Field>
        <CheckboxGroup
          legend="Scopes"
          name="scopes"
          choices={TOKEN_SCOPES}
          value={scopes}
          onChange={setScopes}
          label={(scope) => <span className="font-mono">{scope}</span>}
          aria={fieldAria(problem, "scopes", alertId)}
          className="flex flex-wrap gap-4"
        />
        <div>
          <SubmitButton pending={create.isPending} pendingLabel="Creating…">Create token</SubmitButton>
        </div>
      </form>
    </Panel>
  );
}
