"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { localProblem, problemOf, type Problem } from "@/lib/browser/problem";
import { addRow } from "@/lib/browser/rows";
import { sendJson } from "@/lib/browser/send-json";
import { createdWebhookDto, WEBHOOK_SECRET_MIN, type WebhookDto } from "@/lib/notify/dto";
import { NOTIFICATION_EVENTS, WEBHOOK_FORMATS, type NotificationEvent, type WebhookFormat } from "@/lib/notify/events";
import { FormAlert } from "@/components/ui/alert";
import { Button, SubmitButton } from "@/components/ui/button";
import { Checkbox, ChoiceSelect, Field, fieldAria, Input } from "@/components/ui/field";
import { Panel } from "@/components/ui/panel";
import { EventChoices, FORMAT_LABELS, WEBHOOK_LABELS, WEBHOOKS_KEY } from "./event-choices";
import { ShownOnce } from "./shown-once";

const BLANK = { name: "", url: "", secret: "", format: "generic" as WebhookFormat, enabled: true };

/** What is wrong with the form before sending, or null. */
function check(form: typeof BLANK, events: NotificationEvent[]): Problem | null {
  if (!form.name.trim()) return localProblem(["name"], "Name: give the webhook a name, such as the channel it posts to.");
  if (!/^https?:\/\//i.test(form.url.trim())) return localProblem(["url"], "URL: give a full http:// or https:// address.");
  if (form.secret && form.secret.length < WEBHOOK_SECRET_MIN) {
    return localProblem(["secret"], `Secret: use at least ${WEBHOOK_SECRET_MIN} characters, or leave it empty to have one generated.`);
  }
  return events.length ? null : localProblem(["events"], "Events: pick at least one event.");
}

/** Creates a webhook; a generated secret lives only in this component's state, so a reload forgets it. */
export function CreateWebhookForm() {
  const id = useId();
  const alertId = `${id}-alert`;
  const queryClient = useQueryClient();
  const [form, setForm] = useState(BLANK);
  const [events, setEvents] = useState<NotificationEvent[]>([...NOTIFICATION_EVENTS]);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [created, setCreated] = useState<{ name: string; secret: string | null } | null>(null);
  const set = (change: Partial<typeof BLANK>) => setForm((before) => ({ ...before, ...change }));

  const create = useMutation({
    mutationFn: (input: Record<string, unknown>) => sendJson("POST", "/api/v1/webhooks", input, createdWebhookDto),
    onSuccess: (result) => {
      if (result.ok) queryClient.setQueryData<WebhookDto[]>(WEBHOOKS_KEY, addRow(result.data.webhook));
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: WEBHOOKS_KEY }),
  });

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const found = check(form, events);
    setProblem(found);
    if (found) return;
    setCreated(null);
    const { secret, ...rest } = form;
    let result: Awaited<ReturnType<typeof create.mutateAsync>>;
    try {
      result = await create.mutateAsync({ ...rest, events, ...(secret ? { secret } : {}) });
    } catch (error) {
      setProblem(localProblem([], error instanceof Error ? error.message : "Creating the webhook failed."));
      return;
    }
    if (!result.ok) return setProblem(problemOf(result, WEBHOOK_LABELS));
    setCreated({ name: result.data.webhook.name, secret: result.data.secret });
    setForm(BLANK);
    setEvents([...NOTIFICATION_EVENTS]);
  }

  return (
    <Panel headingId={`${id}-heading`} title="Add a webhook">
      {created?.secret ? (
        <ShownOnce
          label={`Signing secret for ${created.name}`}
          note="Shown once: copy it now and give it to the receiver, which checks the x-baton-signature header with it."
          secret={created.secret}
          what="secret"
          onDone={() => setCreated(null)}
        />
      ) : created ? (
        <div className="mb-4 flex flex-wrap items-center gap-2 rounded-md bg-amber-50 p-3 ring-1 ring-amber-200 dark:bg-amber-950 dark:ring-amber-900">
          <p role="status" className="text-sm">
            Added {created.name}. It signs with the secret you gave.
          </p>
          <Button onClick={() => setCreated(null)}>Done</Button>
        </div>
      ) : null}
      <form onSubmit={submit} aria-labelledby={`${id}-heading`} className="flex flex-col gap-3" noValidate>
        <FormAlert problem={problem} id={alertId} />
        <Field label="Name">
          <Input name="name" value={form.name} onChange={(input) => set({ name: input.target.value })} autoComplete="off" maxLength={100} className="max-w-sm" {...fieldAria(problem, "name", alertId)} />
        </Field>
        <Field label="URL">
          <Input
            name="url"
            type="url"
            value={form.url}
            onChange={(input) => set({ url: input.target.value })}
            autoComplete="off"
            spellCheck={false}
            placeholder="https://hooks.example.com/baton"
            className="max-w-xl font-mono"
            {...fieldAria(problem, "url", alertId)}
          />
        </Field>
        <Field label="Secret (optional: leave empty and Baton generates one)">
          <Input
            name="secret"
            type="password"
            value={form.secret}
            onChange={(input) => set({ secret: input.target.value })}
            autoComplete="new-password"
            spellCheck={false}
            className="max-w-sm font-mono"
            {...fieldAria(problem, "secret", alertId)}
          />
        </Field>
        <Field label="Format">
          <ChoiceSelect name="format" value={form.format} choices={WEBHOOK_FORMATS} labels={FORMAT_LABELS} onChoose={(format) => set({ format })} className="max-w-xs" {...fieldAria(problem, "format", alertId)} />
        </Field>
        <EventChoices legend="Events to announce" value={events} onChange={setEvents} aria={fieldAria(problem, "events", alertId)} />
        <Checkbox label="Enabled" name="enabled" checked={form.enabled} onChange={(input) => set({ enabled: input.target.checked })} />
        <div>
          <SubmitButton pending={create.isPending} pendingLabel="Adding…">Add webhook</SubmitButton>
        </div>
      </form>
    </Panel>
  );
}
