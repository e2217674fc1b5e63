"use client";

import Link from "next/link";
import { useId, useState, type FormEvent } from "react";
import { signedInSchema } from "@/lib/auth/dto";
import { sendJson } from "@/lib/browser/send-json";
import { buttonClass, FormAlert, inputClass, labelClass, localProblem, names, problemOf, type Problem } from "./form-parts";

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
  const describe = (field: string, hint?: string) => [hint, names(problem, field) ? alertId : undefined].filter(Boolean).join(" ") || undefined;
  return (
    <form onSubmit={submit} aria-labelledby="setup-heading" className="flex flex-col gap-3" noValidate>
      <FormAlert problem={problem} id={alertId} />
      {problem?.code === "conflict" && problem.fields.length === 0 ? (
        <Link href="/sign-in" className="text-sm text-sky-700 underline dark:text-sky-400">
          Go to sign in
        </Link>
      ) : null}
      <label className={labelClass} htmlFor={`${id}-username`}>
        Username
      </label>
      <input
        id={`${id}-username`}
        name="username"
        autoComplete="username"
        autoCapitalize="none"
        spellCheck={false}
        className={inputClass}
        aria-invalid={names(problem, "username")}
        aria-describedby={describe("username")}
      />
      <label className={labelClass} htmlFor={`${id}-password`}>
        Password
      </label>
      <input
        id={`${id}-password`}
        name="password"
        type="password"
        autoComplete="new-password"
        className={inputClass}
        aria-invalid={names(problem, "password")}
        aria-describedby={describe("password", `${id}-password-hint`)}
      />
      <p id={`${id}-password-hint`} className="-mt-2 text-xs text-zinc-500 dark:text-zinc-400">
        At least {minPasswordLength} characters.
      </p>
      <label className={labelClass} htmlFor={`${id}-confirm`}>
        Confirm password
      </label>
      <input
        id={`${id}-confirm`}
        name="confirm"
        type="password"
        autoComplete="new-password"
        className={inputClass}
        aria-invalid={names(problem, "confirm")}
        aria-describedby={describe("confirm")}
      />
      <button type="submit" disabled={pending} className={buttonClass}>
        {pending ? "Creating…" : "Create admin account"}
      </button>
    </form>
  );
}
