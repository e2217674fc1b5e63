"use client";

import { useId } from "react";
import { localProblem } from "@/lib/browser/problem";
import { useSessionForm } from "./use-session-form";
import { FormAlert } from "@/components/ui/alert";
import { SubmitButton } from "@/components/ui/button";
import { Field, fieldAria, Input } from "@/components/ui/field";

const LABELS: Record<string, string> = { username: "Username", password: "Password" };

/** Sign-in with a username and password; `next` was checked on the server (a path of this site). */
export function SignInForm({ next }: { next: string }) {
  const id = useId();
  const { problem, pending, submit } = useSessionForm({
    path: "/api/v1/session",
    labels: LABELS,
    next,
    read(form) {
      const username = String(form.get("username") ?? "");
      const password = String(form.get("password") ?? "");
      if (!username.trim() || !password) return { problem: localProblem(!username.trim() ? ["username"] : ["password"], "Enter your username and password.") };
      return { body: { username, password } };
    },
    explain: (failure) => (failure.status === 401 ? localProblem(["username", "password"], "Wrong username or password.") : null),
  });

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
      <SubmitButton pending={pending} pendingLabel="Signing in…">Sign in</SubmitButton>
    </form>
  );
}
