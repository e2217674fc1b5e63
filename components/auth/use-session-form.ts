"use client";

import { useState, type FormEvent } from "react";
import { signedInSchema } from "@/lib/auth/dto";
import { sendJson, type SendResult } from "@/lib/browser/send-json";
import { problemOf, type Problem } from "@/lib/browser/problem";

interface SessionForm {
  /** The endpoint that signs the person in (first run or sign-in). */
  path: string;
  /** Field names to labels, for the API's field errors. */
  labels: Record<string, string>;
  /** Where to go once signed in: a path of this site. */
  next: string;
  /** The request body, or a problem found before sending. */
  read(form: FormData): { body: Record<string, string> } | { problem: Problem };
  /** A failure this form words itself (sign-in's wrong pair), or null for the API's words. */
  explain?(failure: Extract<SendResult<unknown>, { ok: false }>): Problem | null;
}

/** The submit of a form that starts a session: checks, posts, then a full navigation. */
export function useSessionForm({ path, labels, next, read, explain }: SessionForm) {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [pending, setPending] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const checked = read(new FormData(event.currentTarget));
    if ("problem" in checked) {
      setProblem(checked.problem);
      return;
    }
    setPending(true);
    setProblem(null);
    const result = await sendJson("POST", path, checked.body, signedInSchema);
    if (result.ok) {
      // A full navigation: the server renders the next page with the new session cookie.
      window.location.assign(next);
      return;
    }
    setPending(false);
    setProblem(explain?.(result) ?? problemOf(result, labels));
  }

  return { problem, pending, submit };
}
