"use client";

import { useId, useState, type FormEvent } from "react";
import { localProblem, type Problem } from "@/lib/browser/problem";
import { removeRow, replaceRow } from "@/lib/browser/rows";
import { sendJson } from "@/lib/browser/send-json";
import { webhookDto, type WebhookDto } from "@/lib/notify/dto";
import type { NotificationEvent } from "@/lib/notify/events";
import { Done, FormAlert } from "@/components/ui/alert";
import { Button, SubmitButton } from "@/components/ui/button";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { Checkbox, fieldAria } from "@/components/ui/field";
import { When } from "@/components/ui/time";
import { useRowAction, WEBHOOKS } from "./admin-list";
import { EventChoices, FORMAT_LABELS, WEBHOOK_LABELS } from "./event-choices";
import { DeliveryLog } from "./webhook-deliveries";

const TERM = "text-muted";

/** One webhook: its settings, and buttons to edit its events, switch it on or off, delete it, and see its deliveries. */
/** `now` (ms): when the list was read; ages are measured from it. */
export function WebhookItem({ webhook, now }: { webhook: WebhookDto; now: number }) {
  const id = useId();
  const alertId = `${id}-alert`;
  const [editing, setEditing] = useState(false);
  const [showLog, setShowLog] = useState(false);
  const [events, setEvents] = useState<NotificationEvent[]>(webhook.events);
  const [enabled, setEnabled] = useState(webhook.enabled);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const path = `${WEBHOOKS.url}/${encodeURIComponent(webhook.id)}`;

  const save = useRowAction({
    resource: WEBHOOKS,
    send: (change: { events: NotificationEvent[]; enabled: boolean }) => sendJson("PATCH", path, change, webhookDto),
    failed: () => `Could not change ${webhook.name}`,
    labels: WEBHOOK_LABELS,
    onProblem: setProblem,
    update: (saved) => replaceRow(saved),
    onDone: () => {
      setEditing(false);
      setStatus(`Saved ${webhook.name}.`);
    },
  });

  const remove = useRowAction({
    resource: WEBHOOKS,
    send: () => sendJson("DELETE", path, undefined, webhookDto),
    failed: () => `Could not delete ${webhook.name}`,
    labels: WEBHOOK_LABELS,
    onProblem: setProblem,
    update: () => removeRow(webhook.id),
  });

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setStatus(null);
    if (!events.length) return setProblem(localProblem(["events"], "Events: pick at least one event (or switch the webhook off)."));
    setProblem(null);
    if (!save.isPending) save.mutate({ events, enabled });
  }

  return (
    <li aria-labelledby={`${id}-name`} className="rounded-md p-3 ring-1 ring-line">
      <div className="flex flex-wrap items-baseline gap-x-3 gap-y-1">
        <h3 id={`${id}-name`} className="font-medium">
          {webhook.name}
        </h3>
        <span className={webhook.enabled ? "text-sm text-success" : "text-sm text-muted"}>{webhook.enabled ? "On" : "Off"}</span>
        <span className={`text-sm ${TERM}`}>{FORMAT_LABELS[webhook.format]}</span>
      </div>
      <dl className="mt-1 grid grid-cols-[auto_1fr] gap-x-3 text-sm">
        <dt className={TERM}>URL</dt>
        <dd className="font-mono text-xs break-all">{webhook.url}</dd>
        <dt className={TERM}>Secret</dt>
        <dd className="font-mono text-xs">{webhook.secret_hint}</dd>
        <dt className={TERM}>Events</dt>
        <dd>{webhook.events.join(", ")}</dd>
        <dt className={TERM}>Created</dt>
        <dd>
          <When iso={webhook.created_at} now={now} /> by {webhook.created_by}
        </dd>
      </dl>
      <div className="mt-2 flex flex-col gap-2">
        <FormAlert problem={problem} id={alertId} />
        <Done>{status}</Done>
      </div>
      {editing ? (
        <form onSubmit={submit} aria-label={`Edit ${webhook.name}`} className="mt-2 flex flex-col gap-3" noValidate>
          <EventChoices legend={`Events ${webhook.name} announces`} value={events} onChange={setEvents} aria={fieldAria(problem, "events", alertId)} />
          <Checkbox label="Enabled (switching off gives up deliveries not sent yet)" checked={enabled} onChange={(input) => setEnabled(input.target.checked)} />
          <div className="flex gap-2">
            <SubmitButton pending={save.isPending} pendingLabel="Saving…">Save</SubmitButton>
            <Button
              onClick={() => {
                setEditing(false);
                setProblem(null);
              }}
            >
              Cancel
            </Button>
          </div>
        </form>
      ) : (
        <div className="mt-2 flex flex-wrap gap-2">
          <Button
            aria-label={`Edit ${webhook.name}`}
            onClick={() => {
              setEvents(webhook.events);
              setEnabled(webhook.enabled);
              setProblem(null);
              setStatus(null);
              setEditing(true);
            }}
          >
            Edit
          </Button>
          <Button aria-expanded={showLog} aria-controls={`${id}-log`} onClick={() => setShowLog((shown) => !shown)}>
            {showLog ? `Hide deliveries of ${webhook.name}` : `Deliveries of ${webhook.name}`}
          </Button>
          <ConfirmButton
            label="Delete"
            name={`Delete ${webhook.name}`}
            confirmLabel={`Confirm delete ${webhook.name}`}
            cancelLabel="Keep it"
            pending={remove.isPending}
            onOpen={() => setProblem(null)}
            onConfirm={() => remove.mutate()}
          />
        </div>
      )}
      {showLog ? (
        <div id={`${id}-log`} className="mt-3">
          <DeliveryLog webhook={webhook} />
        </div>
      ) : null}
    </li>
  );
}
