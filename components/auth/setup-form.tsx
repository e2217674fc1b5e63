"use client";

import Link from "next/link";
import { useId, useState, type FormEvent } from "react";
import { signedInSchema } from "@/lib/auth/dto";
import { sendJson } from "@/lib/browser/send-json";
import { localProblem, problemOf, type Problem } from "@/lib/browser/problem";
import { FormAlert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Field, fieldAria, Input } from "@/components/ui/field";

const LABELS: Record<string, string> = { username: "Username", password: "Password", confirm: "Confirm password" };

/** First run: creates the admin account, which signs them in. */
export function SetupForm({ minPasswordLength, code }: { minPasswordLength: number; code?: string }) {
  const id = useId();
  const [problem, setProblem] = useState<Problem | null>(null);
  const [pending, setPending] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const username = String(form.get("username") ?? "");
    const password = String(form.get("password") ?? "");
    const confirm = String(form.get("confirm") ?? "");
    if (password.length < minPasswordLength) {
      setProblem(localProblem(["password"], `Password: use at least ${minPasswordLength} characters.`));
      return;
    }
    if (password !== confirm) {
      setProblem(localProblem(["confirm"], "Confirm password: the two passwords differ; type the same password twice."));
      return;
    }
    setPending(true);
    setProblem(null);
    const result = await sendJson("POST", "/api/v1/setup", code ? { username, password, code } : { username, password }, signedInSchema);
    if (result.ok) {
      // eslint-disable-next-line @next/next/no-location-assign-relative-destination -- a full navigation: the server renders the next page with the new session cookie.
      window.location.assign("/");
      return;
    }
    setPending(false);
    setProblem(problemOf(result, LABELS));
  }

  const alertId = `${id}-alert`;
  const hintId = `${id}-password-hint`;
  return (
    <form onSubmit={submit} aria-labelledby="setup-heading" className="flex flex-col gap-3" noValidate>
      <FormAlert problem={problem} id={alertId} />
      {problem?.code === "conflict" && problem.fields.length === 0 ? (
        <Link href="/sign-in" className="text-sm text-link underline">
          Go to sign in
        </Link>
      ) : null}
      <Field label="Username">
        <Input name="username" autoComplete="username" autoCapitalize="none" spellCheck={false} {...fieldAria(problem, "username", alertId)} />
      </Field>
      <Field label="Password" hint={`At least ${minPasswordLength} characters.`} hintId={hintId}>
        <Input name="password" type="password" autoComplete="new-password" {...fieldAria(problem, "password", alertId, hintId)} />
      </Field>
      <Field label="Confirm password">
        <Input name="confirm" type="password" autoComplete="new-password" {...fieldAria(problem, "confirm", alertId)} />
      </Field>
      <Button type="submit" variant="primary" disabled={pending}>
        {pending ? "Creating…" : "Create admin account"}
      </Button>
    </form>
  );
}
