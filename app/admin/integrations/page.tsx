import type { Metadata } from "next";
import { IntegrationsAdmin } from "@/components/admin/integrations-admin";
import { requirePagePerson } from "@/lib/auth/page-person";
import { listIntegrations } from "@/lib/integrations/integrations";

/** When the list was read (ms): ages on the page are measured from it. */
const readAt = () => Date.now();

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Integrations" };

/** Admin: code host integrations (GitHub, GitLab webhooks) and the deliveries no active thread matched. */
export default async function IntegrationsPage() {
  await requirePagePerson("/admin/integrations", "admin");
  const list = await listIntegrations();
  return (
    <>
      <h1 className="text-lg font-semibold">Integrations</h1>
      <IntegrationsAdmin list={list} now={readAt()} />
    </>
  );
}
