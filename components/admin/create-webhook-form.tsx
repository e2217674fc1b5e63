"use client";

import { useState, type ChangeEvent, type FormEvent } from "react";
import { localProblem, type Problem } from "@/lib/browser/problem";
import { sendJson } from "@/lib/browser/send-json";
import { createdWebhookDto, WEBHOOK_NAME_MAX, WEBHOOK_SECRET_MIN } from "@/lib/notify/dto";
import { NOTIFICATION_EVENTS, WEBHOOK_FORMATS, type NotificationEvent, type WebhookFormat } from "@/lib/notify/events";
import { Button, SubmitButton } from "@/components/ui/button";
import { Checkbox, ChoiceSelect, Field, Input } from "@/components/ui/field";
import { FormPanel } from "@/components/ui/form-panel";
import { useAddForm, WEBHOOKS } from "./admin-list";
import { EventChoices, FORMAT_LABELS, WEBHOOK_LABELS } from "./event-choices";
import { NameField } from "./name-field";
import { ShownOnce } from "./shown-once";

const BLANK = { name: "", url: "", secret: "", format: "generic" as WebhookFormat, enabled: true };

/** What is wrong with the form before sending, or null. */
function check(values: typeof BLANK, events: NotificationEvent[]): Problem | null {
  if (!values.name.trim()) return localProblem(["name"], "Name: give the webhook a name, such as the channel it posts to.");
  if (!/^https?:\/\//i.test(values.url.trim())) return localProblem(["url"], "URL: give a full http:// or https:// address.");
  if (values.secret && values.secret.length < WEBHOOK_SECRET_MIN) {
    return localProblem(["secret"], `Secret: use at least ${WEBHOOK_SECRET_MIN} characters, or leave it empty to have one generated.`);
  }
  return events.length ? null : localProblem(["events"], "Events: pick at least one event.");
}

/** Creates a webhook; a generated secret lives only in this component's state, so a reload forgets it. */
export function CreateWebhookForm() {
  const [values, setValues] = useState(BLANK);
  const [events, setEvents] = useState<NotificationEvent[]>([...NOTIFICATION_EVENTS]);
  const [created, setCreated] = useState<{ name: string; secret: string | null } | null>(null);
  const set = (change: Partial<typeof BLANK>) => setValues((before) => ({ ...before, ...change }));
  const { form, add, pending } = useAddForm({
    resource: WEBHOOKS,
    labels: WEBHOOK_LABELS,
    send: (input: Record<string, unknown>) => sendJson("POST", WEBHOOKS.url, input, createdWebhookDto),
    rowOf: (answer) => answer.webhook,
    failed: "Creating the webhook failed.",
  });
  /** A text input's name, value, change and ARIA, from its key in the form's values. */
  const text = (key: "url" | "secret") => ({
    name: key,
    value: values[key],
    onChange: (input: ChangeEvent<HTMLInputElement>) => set({ [key]: input.target.value }),
    ...form.aria(key),
  });

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const found = check(values, events);
    form.setProblem(found);
    if (found) return;
    setCreated(null);
    const { secret, ...rest } = values;
    const answer = await add({ ...rest, events, ...(secret ? { secret } : {}) });
    if (!answer) return;
    setCreated({ name: answer.webhook.name, secret: answer.secret });
    setValues(BLANK);
    setEvents([...NOTIFICATION_EVENTS]);
  }

  const notice = created?.secret ? (
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
  ) : null;
  return (
    <FormPanel form={form} title="Add a webhook" notice={notice} onSubmit={submit}>
      <NameField value={values.name} onChange={(name) => set({ name })} maxLength={WEBHOOK_NAME_MAX} aria={form.aria("name")} />
      <Field label="URL">
        <Input {...text("url")} type="url" autoComplete="off" spellCheck={false} placeholder="https://hooks.example.com/baton" className="max-w-xl font-mono" />
      </Field>
      <Field label="Secret (optional: leave empty and Baton generates one)">
        <Input {...text("secret")} type="password" autoComplete="new-password" spellCheck={false} className="max-w-sm font-mono" />
      </Field>
      <Field label="Format">
        <ChoiceSelect name="format" value={values.format} choices={WEBHOOK_FORMATS} labels={FORMAT_LABELS} onChoose={(format) => set({ format })} className="max-w-xs" {...form.aria("format")} />
      </Field>
      <EventChoices legend="Events to announce" value={events} onChange={setEvents} aria={form.aria("events")} />
      <Checkbox label="Enabled" name="enabled" checked={values.enabled} onChange={(input) => set({ enabled: input.target.checked })} />
      <div>
        <SubmitButton pending={pending} pendingLabel="Adding…">Add webhook</SubmitButton>
      </div>
    </FormPanel>
  );
}
