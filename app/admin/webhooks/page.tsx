import type { Metadata } from "next";
import { WebhooksAdmin } from "@/components/admin/webhooks-admin";
import { requirePagePerson } from "@/lib/auth/page-person";
import { listWebhooks } from "@/lib/notify/webhooks";

/** When the list was read (ms): ages on the page are measured from it. */
const readAt = () => Date.now();

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Webhooks" };

/** Admin: outgoing webhooks (questions, critical risks, failed verdicts, stale threads, regressions) and their delivery logs. */
export default async function WebhooksPage() {
  await requirePagePerson("/admin/webhooks", "admin");
  const webhooks = await listWebhooks();
  return (
    <>
      <h1 className="text-lg font-semibold">Webhooks</h1>
      <WebhooksAdmin initialWebhooks={webhooks} loadedAt={readAt()} />
    </>
  );
}
