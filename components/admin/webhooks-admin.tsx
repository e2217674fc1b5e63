"use client";

import { webhookListDto, type WebhookDto } from "@/lib/notify/dto";
import { Alert } from "@/components/ui/alert";
import { Panel } from "@/components/ui/panel";
import { useAdminList } from "./admin-list";
import { CreateWebhookForm } from "./create-webhook-form";
import { WEBHOOKS_KEY } from "./event-choices";
import { WebhookItem } from "./webhook-item";

/** The webhooks admin: a form that creates one (a generated secret is shown once), the list with edit, delete and each one's delivery log. */
export function WebhooksAdmin({ initialWebhooks, loadedAt }: { initialWebhooks: WebhookDto[]; loadedAt: number }) {
  const webhooks = useAdminList({
    queryKey: WEBHOOKS_KEY,
    url: "/api/v1/webhooks",
    schema: webhookListDto.transform((list) => list.webhooks),
    what: "the webhooks",
    initial: initialWebhooks,
    loadedAt,
  });
  return (
    <>
      <CreateWebhookForm />
      <Panel headingId="webhooks-heading" title="Webhooks">
        {webhooks.isError ? <Alert className="mb-2">The list could not be refreshed: {webhooks.error.message}</Alert> : null}
        {webhooks.data.length === 0 ? (
          <p className="text-sm text-muted">No webhooks yet. Add one to hear of questions, critical risks, failed verdicts and stale threads.</p>
        ) : (
          <ul className="flex flex-col gap-3">
            {webhooks.data.map((webhook) => (
              <WebhookItem key={webhook.id} webhook={webhook} now={webhooks.dataUpdatedAt} />
            ))}
          </ul>
        )}
      </Panel>
    </>
  );
}
