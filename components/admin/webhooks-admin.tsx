"use client";

import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useRef, useState, type FormEvent } from "react";
import { sendJson, type SendResult } from "@/lib/browser/send-json";
import {
  createdWebhookDto,
  deliveryPageDto,
  webhookDto,
  webhookListDto,
  WEBHOOK_SECRET_MIN,
  type DeliveryPageDto,
  type WebhookDto,
} from "@/lib/webhooks/dto";
import { NOTIFICATION_EVENT_INFO, NOTIFICATION_EVENTS, WEBHOOK_FORMATS, type NotificationEvent, type WebhookFormat } from "@/lib/webhooks/events";
import {
  buttonClass,
  cardClass,
  dangerButtonClass,
  FormAlert,
  inputClass,
  labelClass,
  localProblem,
  names,
  problemOf,
  secondaryButtonClass,
  type Problem,
} from "@/components/auth/form-parts";

const WEBHOOKS_KEY = ["webhooks"] as const;
const LABELS: Record<string, string> = { name: "Name", url: "URL", secret: "Secret", format: "Format", events: "Events", enabled: "Enabled" };
const FORMAT_LABELS: Record<WebhookFormat, string> = { generic: "Generic JSON", slack: "Slack-compatible" };
const headingClass = "mb-2 text-sm font-semibold tracking-wide text-zinc-600 uppercase dark:text-zinc-400";

async function fetchJson<T>(url: string, parse: (value: unknown) => T, what: string): Promise<T> {
  const response = await fetch(url, { headers: { accept: "application/json" }, credentials: "same-origin", cache: "no-store" });
  if (!response.ok) throw new Error(`Baton answered ${response.status} while listing ${what}.`);
  return parse(await response.json());
}

const fetchWebhooks = () => fetchJson("/api/v1/webhooks", (value) => webhookListDto.parse(value).webhooks, "webhooks");

/** A time as the API sends it (ISO, UTC), shown the same on the server and in the browser. */
function When({ iso }: { iso: string }) {
  return <time dateTime={iso}>{`${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`}</time>;
}

/** Checkboxes for the events a webhook announces. */
function EventChoices({
  legend,
  value,
  onChange,
  invalid,
  describedBy,
}: {
  legend: string;
  value: NotificationEvent[];
  onChange: (events: NotificationEvent[]) => void;
  invalid?: boolean;
  describedBy?: string;
}) {
  return (
    <fieldset aria-invalid={invalid} aria-describedby={describedBy}>
      <legend className="mb-1 text-xs text-zinc-600 dark:text-zinc-400">{legend}</legend>
      <div className="flex flex-col gap-1">
        {NOTIFICATION_EVENTS.map((event) => (
          <label key={event} className="flex items-center gap-1.5 text-sm">
            <input
              type="checkbox"
              name="events"
              value={event}
              checked={value.includes(event)}
              onChange={(input) => onChange(input.target.checked ? [...value, event] : value.filter((chosen) => chosen !== event))}
              className="focus-visible:outline-2 focus-visible:outline-sky-600"
            />
            <span>{NOTIFICATION_EVENT_INFO[event].label}</span>
            <span className="font-mono text-xs text-zinc-500">{event}</span>
          </label>
        ))}
      </div>
    </fieldset>
  );
}

/** The webhooks admin: a form that creates one (a generated secret is shown once), the list with edit, delete and each one's delivery log. */
export function WebhooksAdmin({ initialWebhooks }: { initialWebhooks: WebhookDto[] }) {
  const webhooks = useQuery({ queryKey: WEBHOOKS_KEY, queryFn: fetchWebhooks, initialData: initialWebhooks });
  return (
    <>
      <CreateWebhookForm />
      <section aria-labelledby="webhooks-heading" className={cardClass}>
        <h2 id="webhooks-heading" className={headingClass}>
          Webhooks
        </h2>
        {webhooks.isError ? (
          <p role="alert" className="mb-2 text-sm text-red-700 dark:text-red-400">
            The list could not be refreshed: {webhooks.error.message}
          </p>
        ) : null}
        {webhooks.data.length === 0 ? (
          <p className="text-sm text-zinc-600 dark:text-zinc-400">No webhooks yet. Add one to hear of questions, critical risks, failed verdicts and stale threads.</p>
        ) : (
          <ul className="flex flex-col gap-3">
            {webhooks.data.map((webhook) => (
              <WebhookItem key={webhook.id} webhook={webhook} />
            ))}
          </ul>
        )}
      </section>
    </>
  );
}

/** One webhook: its settings, and buttons to edit its events, switch it on or off, delete it, and see its deliveries. */
function WebhookItem({ webhook }: { webhook: WebhookDto }) {
  const id = useId();
  const queryClient = useQueryClient();
  const [mode, setMode] = useState<"view" | "edit" | "confirm-delete">("view");
  const [showLog, setShowLog] = useState(false);
  const [events, setEvents] = useState<NotificationEvent[]>(webhook.events);
  const [enabled, setEnabled] = useState(webhook.enabled);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const deleteButton = useRef<HTMLButtonElement>(null);

  const save = useMutation<SendResult<WebhookDto>, Error, { events: NotificationEvent[]; enabled: boolean }>({
    mutationFn: (change) => sendJson("PATCH", `/api/v1/webhooks/${encodeURIComponent(webhook.id)}`, change, webhookDto),
    onSuccess: (result) => {
      if (!result.ok) {
        setProblem(problemOf(result, LABELS, `Could not change ${webhook.name}:`));
        return;
      }
      setMode("view");
      setStatus(`Saved ${webhook.name}.`);
      queryClient.setQueryData<WebhookDto[]>(WEBHOOKS_KEY, (list) => list?.map((row) => (row.id === result.data.id ? result.data : row)));
    },
    onError: (error) => setProblem(localProblem([], `Could not change ${webhook.name}: ${error.message}`)),
    onSettled: () => queryClient.invalidateQueries({ queryKey: WEBHOOKS_KEY }),
  });

  const remove = useMutation<SendResult<WebhookDto>, Error, void>({
    mutationFn: () => sendJson("DELETE", `/api/v1/webhooks/${encodeURIComponent(webhook.id)}`, undefined, webhookDto),
    onSuccess: (result) => {
      if (!result.ok) {
        setProblem(problemOf(result, LABELS, `Could not delete ${webhook.name}:`));
        return;
      }
      queryClient.setQueryData<WebhookDto[]>(WEBHOOKS_KEY, (list) => list?.filter((row) => row.id !== webhook.id));
    },
    onError: (error) => setProblem(localProblem([], `Could not delete ${webhook.name}: ${error.message}`)),
    onSettled: () => queryClient.invalidateQueries({ queryKey: WEBHOOKS_KEY }),
  });

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setStatus(null);
    if (!events.length) {
      setProblem(localProblem(["events"], "Events: pick at least one event (or switch the webhook off)."));
      return;
    }
    setProblem(null);
    if (!save.isPending) save.mutate({ events, enabled });
  }

  return (
    <li aria-labelledby={`${id}-name`} className="rounded-md p-3 ring-1 ring-zinc-200 dark:ring-zinc-800">
      <div className="flex flex-wrap items-baseline gap-x-3 gap-y-1">
        <h3 id={`${id}-name`} className="font-medium">
          {webhook.name}
        </h3>
        <span className={webhook.enabled ? "text-sm text-emerald-700 dark:text-emerald-400" : "text-sm text-zinc-500"}>
          {webhook.enabled ? "On" : "Off"}
        </span>
        <span className="text-sm text-zinc-600 dark:text-zinc-400">{FORMAT_LABELS[webhook.format]}</span>
      </div>
      <dl className="mt-1 grid grid-cols-[auto_1fr] gap-x-3 text-sm">
        <dt className="text-zinc-600 dark:text-zinc-400">URL</dt>
        <dd className="font-mono text-xs break-all">{webhook.url}</dd>
        <dt className="text-zinc-600 dark:text-zinc-400">Secret</dt>
        <dd className="font-mono text-xs">{webhook.secret_hint}</dd>
        <dt className="text-zinc-600 dark:text-zinc-400">Events</dt>
        <dd>{webhook.events.join(", ")}</dd>
        <dt className="text-zinc-600 dark:text-zinc-400">Created</dt>
        <dd>
          <When iso={webhook.created_at} /> by {webhook.created_by}
        </dd>
      </dl>
      <div className="mt-2 flex flex-col gap-2">
        <FormAlert problem={problem} id={`${id}-alert`} />
        {status ? (
          <p role="status" className="text-sm text-emerald-700 dark:text-emerald-400">
            {status}
          </p>
        ) : null}
      </div>
      {mode === "edit" ? (
        <form onSubmit={submit} aria-label={`Edit ${webhook.name}`} className="mt-2 flex flex-col gap-3" noValidate>
          <EventChoices
            legend={`Events ${webhook.name} announces`}
            value={events}
            onChange={setEvents}
            invalid={names(problem, "events")}
            describedBy={names(problem, "events") ? `${id}-alert` : undefined}
          />
          <label className="flex items-center gap-1.5 text-sm">
            <input type="checkbox" checked={enabled} onChange={(input) => setEnabled(input.target.checked)} className="focus-visible:outline-2 focus-visible:outline-sky-600" />
            Enabled (switching off gives up deliveries not sent yet)
          </label>
          <div className="flex gap-2">
            <button type="submit" className={buttonClass} disabled={save.isPending}>
              {save.isPending ? "Saving…" : "Save"}
            </button>
            <button
              type="button"
              className={secondaryButtonClass}
              onClick={() => {
                setMode("view");
                setProblem(null);
              }}
            >
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <div className="mt-2 flex flex-wrap gap-2">
          <button
            type="button"
            className={secondaryButtonClass}
            aria-label={`Edit ${webhook.name}`}
            onClick={() => {
              setEvents(webhook.events);
              setEnabled(webhook.enabled);
              setProblem(null);
              setStatus(null);
              setMode("edit");
            }}
          >
            Edit
          </button>
          <button type="button" className={secondaryButtonClass} aria-expanded={showLog} aria-controls={`${id}-log`} onClick={() => setShowLog((shown) => !shown)}>
            {showLog ? `Hide deliveries of ${webhook.name}` : `Deliveries of ${webhook.name}`}
          </button>
          {mode === "confirm-delete" ? (
            <>
              <button
                type="button"
                autoFocus
                className={dangerButtonClass}
                aria-busy={remove.isPending}
                onClick={() => {
                  if (!remove.isPending) remove.mutate();
                }}
              >
                Confirm delete {webhook.name}
              </button>
              <button
                type="button"
                className={secondaryButtonClass}
                onClick={() => {
                  setMode("view");
                  // Back to the button that opened the confirmation.
                  requestAnimationFrame(() => deleteButton.current?.focus());
                }}
              >
                Keep it
              </button>
            </>
          ) : (
            <button
              ref={deleteButton}
              type="button"
              className={secondaryButtonClass}
              aria-label={`Delete ${webhook.name}`}
              onClick={() => {
                setProblem(null);
                setMode("confirm-delete");
              }}
            >
              Delete
            </button>
          )}
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

/** A webhook's delivery log, newest first, a page at a time. */
function DeliveryLog({ webhook }: { webhook: WebhookDto }) {
  const log = useInfiniteQuery({
    queryKey: ["webhook-deliveries", webhook.id],
    initialPageParam: null as string | null,
    queryFn: ({ pageParam }) =>
      fetchJson(
        `/api/v1/webhooks/${encodeURIComponent(webhook.id)}/deliveries${pageParam ? `?before=${encodeURIComponent(pageParam)}` : ""}`,
        (value) => deliveryPageDto.parse(value),
        "deliveries",
      ),
    getNextPageParam: (page: DeliveryPageDto) => page.next_before,
  });
  const rows = log.data?.pages.flatMap((page) => page.deliveries) ?? [];
  return (
    <section aria-label={`Deliveries of ${webhook.name}`}>
      <div className="mb-1 flex items-center gap-2">
        <h4 className="text-sm font-medium">Deliveries</h4>
        <button type="button" className={secondaryButtonClass} onClick={() => log.refetch()} disabled={log.isFetching}>
          {log.isFetching ? "Refreshing…" : "Refresh"}
        </button>
      </div>
      {log.isError ? (
        <p role="alert" className="text-sm text-red-700 dark:text-red-400">
          The deliveries could not be read: {log.error.message}
        </p>
      ) : log.isPending ? (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">Loading…</p>
      ) : rows.length === 0 ? (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">Nothing sent yet.</p>
      ) : (
        <div className="overflow-x-auto">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">Deliveries of {webhook.name}, newest first</caption>
            <thead className="text-xs text-zinc-600 dark:text-zinc-400">
              <tr>
                <th scope="col" className="py-1 pr-3 font-medium">Created</th>
                <th scope="col" className="py-1 pr-3 font-medium">Event</th>
                <th scope="col" className="py-1 pr-3 font-medium">Thread</th>
                <th scope="col" className="py-1 pr-3 font-medium">Status</th>
                <th scope="col" className="py-1 pr-3 font-medium">Attempts</th>
                <th scope="col" className="py-1 pr-3 font-medium">Last HTTP status</th>
                <th scope="col" className="py-1 pr-3 font-medium">Last error</th>
                <th scope="col" className="py-1 font-medium">Delivered or next attempt</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((delivery) => (
                <tr key={delivery.id} className="border-t border-zinc-200 align-top dark:border-zinc-800">
                  <td className="py-1 pr-3 whitespace-nowrap">
                    <When iso={delivery.created_at} />
                  </td>
                  <td className="py-1 pr-3 font-mono text-xs">{delivery.event}</td>
                  <td className="py-1 pr-3 font-mono text-xs break-all">{delivery.thread_key ?? "—"}</td>
                  <td className="py-1 pr-3">{delivery.status}</td>
                  <td className="py-1 pr-3">{delivery.attempts}</td>
                  <td className="py-1 pr-3">{delivery.last_status ?? "—"}</td>
                  <td className="py-1 pr-3 break-words">{delivery.last_error ?? "—"}</td>
                  <td className="py-1 whitespace-nowrap">
                    {delivery.delivered_at ? (
                      <When iso={delivery.delivered_at} />
                    ) : delivery.next_attempt_at ? (
                      <>
                        next <When iso={delivery.next_attempt_at} />
                      </>
                    ) : (
                      "—"
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {log.hasNextPage ? (
        <button type="button" className={`${secondaryButtonClass} mt-2`} onClick={() => log.fetchNextPage()} disabled={log.isFetchingNextPage}>
          {log.isFetchingNextPage ? "Loading…" : "Older deliveries"}
        </button>
      ) : null}
    </section>
  );
}

/** Creates a webhook; a generated secret lives only in this component's state, so a reload forgets it. */
function CreateWebhookForm() {
  const id = useId();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [url, setUrl] = useState("");
  const [secret, setSecret] = useState("");
  const [format, setFormat] = useState<WebhookFormat>("generic");
  const [events, setEvents] = useState<NotificationEvent[]>([...NOTIFICATION_EVENTS]);
  const [enabled, setEnabled] = useState(true);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [created, setCreated] = useState<{ name: string; secret: string | null } | null>(null);
  const [copyStatus, setCopyStatus] = useState<string | null>(null);
  const secretRef = useRef<HTMLInputElement>(null);

  const create = useMutation({
    mutationFn: (input: Record<string, unknown>) => sendJson("POST", "/api/v1/webhooks", input, createdWebhookDto),
    onSuccess: (result) => {
      if (result.ok) {
        const { webhook } = result.data;
        queryClient.setQueryData<WebhookDto[]>(WEBHOOKS_KEY, (list) => [...(list ?? []).filter((row) => row.id !== webhook.id), webhook]);
      }
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: WEBHOOKS_KEY }),
  });

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setCopyStatus(null);
    if (!name.trim()) return setProblem(localProblem(["name"], "Name: give the webhook a name, such as the channel it posts to."));
    if (!/^https?:\/\//i.test(url.trim())) return setProblem(localProblem(["url"], "URL: give a full http:// or https:// address."));
    if (secret && secret.length < WEBHOOK_SECRET_MIN) {
      return setProblem(localProblem(["secret"], `Secret: use at least ${WEBHOOK_SECRET_MIN} characters, or leave it empty to have one generated.`));
    }
    if (!events.length) return setProblem(localProblem(["events"], "Events: pick at least one event."));
    setProblem(null);
    setCreated(null);
    let result: Awaited<ReturnType<typeof create.mutateAsync>>;
    try {
      result = await create.mutateAsync({ name, url, format, events, enabled, ...(secret ? { secret } : {}) });
    } catch (error) {
      setProblem(localProblem([], error instanceof Error ? error.message : "Creating the webhook failed."));
      return;
    }
    if (!result.ok) {
      setProblem(problemOf(result, LABELS));
      return;
    }
    setCreated({ name: result.data.webhook.name, secret: result.data.secret });
    setName("");
    setUrl("");
    setSecret("");
    setFormat("generic");
    setEvents([...NOTIFICATION_EVENTS]);
    setEnabled(true);
  }

  async function copy() {
    if (!created?.secret) return;
    try {
      await navigator.clipboard.writeText(created.secret);
      setCopyStatus("Copied.");
    } catch {
      // No clipboard access (a page served over plain http on another host): select it for Ctrl+C.
      secretRef.current?.select();
      setCopyStatus("Copying is not allowed here: the secret is selected, press Ctrl+C (or ⌘C) to copy it.");
    }
  }

  const invalid = (field: string) => ({
    "aria-invalid": names(problem, field),
    "aria-describedby": names(problem, field) ? `${id}-alert` : undefined,
  });

  return (
    <section aria-labelledby={`${id}-heading`} className={cardClass}>
      <h2 id={`${id}-heading`} className={headingClass}>
        Add a webhook
      </h2>
      {created ? (
        <div className="mb-4 flex flex-col gap-2 rounded-md bg-amber-50 p-3 ring-1 ring-amber-200 dark:bg-amber-950 dark:ring-amber-900">
          {created.secret ? (
            <>
              <label htmlFor={`${id}-secret-shown`} className="text-sm font-medium">
                Signing secret for {created.name}
              </label>
              <p id={`${id}-secret-note`} className="text-sm">
                Shown once: copy it now and give it to the receiver, which checks the x-baton-signature header with it.
              </p>
              <div className="flex flex-wrap gap-2">
                <input
                  ref={secretRef}
                  id={`${id}-secret-shown`}
                  readOnly
                  autoFocus
                  value={created.secret}
                  onFocus={(input) => input.currentTarget.select()}
                  aria-describedby={`${id}-secret-note`}
                  spellCheck={false}
                  className={`${inputClass} min-w-0 flex-1 font-mono`}
                />
                <button type="button" className={buttonClass} onClick={copy}>
                  Copy
                </button>
              </div>
              <p role="status" className="text-sm">
                {copyStatus}
              </p>
            </>
          ) : (
            <p role="status" className="text-sm">
              Added {created.name}. It signs with the secret you gave.
            </p>
          )}
          <div>
            <button
              type="button"
              className={secondaryButtonClass}
              onClick={() => {
                setCreated(null);
                setCopyStatus(null);
              }}
            >
              Done
            </button>
          </div>
        </div>
      ) : null}
      <form onSubmit={submit} aria-labelledby={`${id}-heading`} className="flex flex-col gap-3" noValidate>
        <FormAlert problem={problem} id={`${id}-alert`} />
        <label className={labelClass}>
          Name
          <input name="name" value={name} onChange={(input) => setName(input.target.value)} autoComplete="off" maxLength={100} className={`${inputClass} max-w-sm`} {...invalid("name")} />
        </label>
        <label className={labelClass}>
          URL
          <input
            name="url"
            type="url"
            value={url}
            onChange={(input) => setUrl(input.target.value)}
            autoComplete="off"
            spellCheck={false}
            placeholder="https://hooks.example.com/baton"
            className={`${inputClass} max-w-xl font-mono`}
            {...invalid("url")}
          />
        </label>
        <label className={labelClass}>
          Secret (optional: leave empty and Baton generates one)
          <input
            name="secret"
            type="password"
            value={secret}
            onChange={(input) => setSecret(input.target.value)}
            autoComplete="new-password"
            spellCheck={false}
            className={`${inputClass} max-w-sm font-mono`}
            {...invalid("secret")}
          />
        </label>
        <label className={labelClass}>
          Format
          <select name="format" value={format} onChange={(input) => setFormat(input.target.value as WebhookFormat)} className={`${inputClass} max-w-xs`} {...invalid("format")}>
            {WEBHOOK_FORMATS.map((choice) => (
              <option key={choice} value={choice}>
                {FORMAT_LABELS[choice]}
              </option>
            ))}
          </select>
        </label>
        <EventChoices
          legend="Events to announce"
          value={events}
          onChange={setEvents}
          invalid={names(problem, "events")}
          describedBy={names(problem, "events") ? `${id}-alert` : undefined}
        />
        <label className="flex items-center gap-1.5 text-sm">
          <input type="checkbox" name="enabled" checked={enabled} onChange={(input) => setEnabled(input.target.checked)} className="focus-visible:outline-2 focus-visible:outline-sky-600" />
          Enabled
        </label>
        <div>
          <button type="submit" disabled={create.isPending} className={buttonClass}>
            {create.isPending ? "Adding…" : "Add webhook"}
          </button>
        </div>
      </form>
    </section>
  );
}
