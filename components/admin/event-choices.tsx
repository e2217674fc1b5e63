import { NOTIFICATION_EVENT_INFO, NOTIFICATION_EVENTS, type NotificationEvent, type WebhookFormat } from "@/lib/notify/events";
import { CheckboxGroup } from "@/components/ui/field";

export const WEBHOOK_LABELS: Record<string, string> = { name: "Name", url: "URL", secret: "Secret", format: "Format", events: "Events", enabled: "Enabled" };
export const FORMAT_LABELS: Record<WebhookFormat, string> = { generic: "Generic JSON", slack: "Slack-compatible" };

/** Checkboxes for the events a webhook announces. */
export function EventChoices({
  legend,
  value,
  onChange,
  aria,
}: {
  legend: string;
  value: NotificationEvent[];
  onChange: (events: NotificationEvent[]) => void;
  /** fieldAria(problem, "events", alertId). */
  aria: { "aria-invalid": boolean; "aria-describedby": string | undefined };
}) {
  return (
    <CheckboxGroup
      legend={legend}
      name="events"
      choices={NOTIFICATION_EVENTS}
      value={value}
      onChange={onChange}
      aria={aria}
      label={(event) => (
        <>
          <span>{NOTIFICATION_EVENT_INFO[event].label}</span>
          <span className="font-mono text-xs text-muted">{event}</span>
        </>
      )}
    />
  );
}
