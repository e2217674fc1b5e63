"use client";

import Link from "next/link";
import { useId } from "react";
import { localProblem } from "@/lib/browser/problem";
import { useSessionForm } from "./use-session-form";
import { FormAlert } from "@/components/ui/alert";
import { SubmitButton } from "@/components/ui/button";
import { Field, fieldAria, Input } from "@/components/ui/field";

const LABELS: Record<string, string> = { username: "Username", password: "Password", confirm: "Confirm password" };

/** First run: creates the admin account, which signs them in. */
export function SetupForm({ minPasswordLength, code }: { minPasswordLength: number; code?: string }) {
  const id = useId();
  const { problem, pending, submit } = useSessionForm({
    path: "/api/v1/setup",
    labels: LABELS,
    next: "/",
    read(form) {
      const username = String(form.get("username") ?? "");
      const password = String(form.get("password") ?? "");
      if (password.length < minPasswordLength) return { problem: localProblem(["password"], `Password: use at least ${minPasswordLength} characters.`) };
      if (password !== String(form.get("confirm") ?? "")) {
        return { problem: localProblem(["confirm"], "Confirm password: the two passwords differ; type the same password twice.") };
      }
      const body: Record<string, string> = code ? { username, password, code } : { username, password };
      return { body };
    },
  });

  const alertId = `${id}-alert`;
  const hintId = `${id}-password-hint`;
  return (
    <form onSubmit={submit} aria-labelledby="setup-heading" className="flex flex-col gap-3" noValidate>
      <FormAlert problem={problem} id={alertId} />
      {problem?.code === "conflict" && problem.fields.length === 0 ? (
        <Link href="/sign-in" prefetch={false} className="text-sm text-link underline">
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
      <SubmitButton pending={pending} pendingLabel="Creating…">Create admin account</SubmitButton>
    </form>
  );
}
