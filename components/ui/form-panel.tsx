"use client";

import { useId, useState, type FormEvent, type ReactNode } from "react";
import { localProblem, problemOf, type Problem } from "@/lib/browser/problem";
import type { SendResult } from "@/lib/browser/send-json";
import { FormAlert } from "./alert";
import { fieldAria } from "./field";
import { Panel } from "./panel";

/**
 * A form's problem and the ids that tie its controls to its error box. `send` clears the
 * problem, runs the request and returns the answer; a refusal (its fields named by `labels`)
 * or a throw becomes the problem (`failed` when the throw says nothing) and `send` returns null.
 */
export function useFormProblem(labels: Record<string, string>) {
  const id = useId();
  const alertId = `${id}-alert`;
  const [problem, setProblem] = useState<Problem | null>(null);

  async function send<T>(request: () => Promise<SendResult<T>>, failed: string): Promise<T | null> {
    setProblem(null);
    let result: SendResult<T>;
    try {
      result = await request();
    } catch (error) {
      setProblem(localProblem([], error instanceof Error ? error.message : failed));
      return null;
    }
    if (!result.ok) {
      setProblem(problemOf(result, labels));
      return null;
    }
    return result.data;
  }

  return { id, alertId, problem, setProblem, send, aria: (field: string, hintId?: string) => fieldAria(problem, field, alertId, hintId) };
}

export type FormProblem = ReturnType<typeof useFormProblem>;

/** A panel holding one form, named by the panel's heading, its error box first; `notice` stands above the form (a secret shown once). */
export function FormPanel({ form, title, notice, onSubmit, children }: { form: FormProblem; title: string; notice?: ReactNode; onSubmit: (event: FormEvent<HTMLFormElement>) => void; children: ReactNode }) {
  const headingId = `${form.id}-heading`;
  return (
    <Panel headingId={headingId} title={title}>
      {notice}
      <form onSubmit={onSubmit} aria-labelledby={headingId} className="flex flex-col gap-3" noValidate>
        <FormAlert problem={form.problem} id={form.alertId} />
        {children}
      </form>
    </Panel>
  );
}
