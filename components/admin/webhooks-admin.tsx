"use client";

import type { WebhookDto } from "@/lib/notify/dto";
import { Panel } from "@/components/ui/panel";
import { useAdminList, WEBHOOKS } from "./admin-list";
import { ListNotices } from "./admin-table";
import { CreateWebhookForm } from "./create-webhook-form";
import { WebhookItem } from "./webhook-item";

/** The webhooks admin: a form that creates one (a generated secret is shown once), the list with edit, delete and each one's delivery log. */
export function WebhooksAdmin({ initialWebhooks, loadedAt }: { initialWebhooks: WebhookDto[]; loadedAt: number }) {
  const webhooks = useAdminList(WEBHOOKS, initialWebhooks, loadedAt);
  return (
    <>
      <CreateWebhookForm />
      <Panel headingId="webhooks-heading" title="Webhooks">
        <ListNotices refreshError={webhooks.error} />
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
