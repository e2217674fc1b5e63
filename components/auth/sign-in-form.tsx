"use client";

import { useId, useState, type FormEvent } from "react";
import { signedInSchema } from "@/lib/auth/dto";
import { sendJson } from "@/lib/browser/send-json";
import { localProblem, problemOf, type Problem } from "@/lib/browser/problem";
import { FormAlert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Field, fieldAria, Input } from "@/components/ui/field";

const LABELS: Record<string, string> = { username: "Username", password: "Password" };

/** Sign-in with a username and password; `next` was checked on the server (a path of this site). */
export function SignInForm({ next }: { next: string }) {
  const id = useId();
  const [problem, setProblem] = useState<Problem | null>(null);
  const [pending, setPending] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const username = String(form.get("username") ?? "");
    const password = String(form.get("password") ?? "");
    if (!username.trim() || !password) {
      setProblem(localProblem(!username.trim() ? ["username"] : ["password"], "Enter your username and password."));
      return;
    }
    setPending(true);
    setProblem(null);
    const result = await sendJson("POST", "/api/v1/session", { username, password }, signedInSchema);
    if (result.ok) {
      // A full navigation: the server renders the next page with the new session cookie.
      window.location.assign(next);
      return;
    }
    setPending(false);
    if (result.status === 401) setProblem(localProblem(["username", "password"], "Wrong username or password."));
    else setProblem(problemOf(result, LABELS));
  }

  // Either field's problem concerns both (a wrong pair): both are described by the alert.
  const aria = (field: string) => ({ ...fieldAria(problem, field, `${id}-alert`), "aria-describedby": problem ? `${id}-alert` : undefined });
  return (
    <form onSubmit={submit} aria-labelledby="sign-in-heading" className="flex flex-col gap-3" noValidate>
      <FormAlert problem={problem} id={`${id}-alert`} />
      <Field label="Username">
        <Input name="username" autoComplete="username" autoCapitalize="none" spellCheck={false} {...aria("username")} />
      </Field>
      <Field label="Password">
        <Input name="password" type="password" autoComplete="current-password" {...aria("password")} />
      </Field>
      <Button type="submit" variant="primary" disabled={pending}>
        {pending ? "Signing in…" : "Sign in"}
      </Button>
    </form>
  );
}
