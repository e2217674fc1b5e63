"use client";

import { useState, type FormEvent } from "react";
import { createdTokenSchema } from "@/lib/auth/dto";
import { TOKEN_SCOPES, type TokenScope } from "@/lib/auth/token-scopes";
import { localProblem } from "@/lib/browser/problem";
import { sendJson } from "@/lib/browser/send-json";
import { SubmitButton } from "@/components/ui/button";
import { CheckboxGroup, Field, Input } from "@/components/ui/field";
import { FormPanel } from "@/components/ui/form-panel";
import { TOKENS, useAddForm } from "./admin-list";
import { NameField } from "./name-field";
import { ShownOnce } from "./shown-once";

const LABELS: Record<string, string> = { name: "Name", scopes: "Scopes", project: "Project" };
/** TOKEN_NAME_MAX of lib/auth/tokens.ts, a server module the browser may not import. */
const TOKEN_NAME_MAX = 100;
const DEFAULT_SCOPES: TokenScope[] = ["packets:write"];

/** Creates a token; its secret lives only in this component's state, so a reload forgets it. */
export function CreateTokenForm() {
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<TokenScope[]>(DEFAULT_SCOPES);
  const [project, setProject] = useState("");
  const [created, setCreated] = useState<{ token: string; name: string } | null>(null);
  const { form, add, pending } = useAddForm({
    resource: TOKENS,
    labels: LABELS,
    send: (input: { name: string; scopes: TokenScope[]; project?: string }) => sendJson("POST", TOKENS.url, input, createdTokenSchema),
    // Only the summary goes into the list (newest first); the secret stays in this form's state.
    rowOf: (answer) => answer.summary,
    at: "first",
    failed: "Creating the token failed.",
  });
  const projectHintId = `${form.id}-project-hint`;

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!name.trim()) return form.setProblem(localProblem(["name"], "Name: give the token a name, such as the agent or machine that will use it."));
    if (!scopes.length) return form.setProblem(localProblem(["scopes"], "Scopes: pick at least one scope."));
    setCreated(null);
    // Blank leaves the token unbound (docs/decisions/056-project-bound-tokens.md); the server checks the name.
    const answer = await add({ name, scopes, ...(project.trim() ? { project } : {}) });
    if (!answer) return;
    setCreated({ token: answer.token, name: answer.summary.name });
    setName("");
    setScopes(DEFAULT_SCOPES);
    setProject("");
  }

  const notice = created ? (
    <ShownOnce label={`New token for ${created.name}`} note="Shown once: copy it now. Baton keeps only a hash." secret={created.token} what="token" onDone={() => setCreated(null)} />
  ) : null;
  return (
    <FormPanel form={form} title="Create a token" notice={notice} onSubmit={submit}>
      <NameField value={name} onChange={setName} maxLength={TOKEN_NAME_MAX} aria={form.aria("name")} />
      <Field label="Project (optional)" hint="Binds the token to one project: its packets without a project take this one, and it writes only this project's threads. Leave blank for any project." hintId={projectHintId}>
        <Input name="project" value={project} onChange={(event) => setProject(event.target.value)} autoComplete="off" className="max-w-sm" {...form.aria("project", projectHintId)} />
      </Field>
      <CheckboxGroup
        legend="Scopes"
        name="scopes"
        choices={TOKEN_SCOPES}
        value={scopes}
        onChange={setScopes}
        label={(scope) => <span className="font-mono">{scope}</span>}
        aria={form.aria("scopes")}
        className="flex flex-wrap gap-4"
      />
      <div>
        <SubmitButton pending={pending} pendingLabel="Creating…">Create token</SubmitButton>
      </div>
    </FormPanel>
  );
}
