import type { Metadata } from "next";
import { Budgets } from "@/components/usage/budgets";
import { UsageChart, UsageTable } from "@/components/usage/usage-chart";
import { Panel } from "@/components/ui/panel";
import { requirePagePerson } from "@/lib/auth/page-person";
import { abilitiesOf } from "@/lib/auth/roles";
import { usageQuerySchema } from "@/lib/views/usage/dto";
import { loadUsage } from "@/lib/views/usage/usage";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Usage" };

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

/** What the sessions cost: the packets' `usage` summed per day, agent and project, and the budgets. */
export default async function UsagePage({ searchParams }: { searchParams: SearchParams }) {
  const person = await requirePagePerson("/usage");
  const { days } = await searchParams;
  const parsed = usageQuerySchema.safeParse({ days: typeof days === "string" ? days : undefined });
  const usage = await loadUsage(parsed.success ? parsed.data : usageQuerySchema.parse({}));
  // The chart shows the currency most of the cost is in; the tables list every currency.
  const currencies = new Map<string | null, number>();
  for (const day of usage.by_day) currencies.set(day.currency, (currencies.get(day.currency) ?? 0) + day.cost);
  const main = [...currencies.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
  return (
    <main id="main" className="mx-auto w-full max-w-6xl flex-1 space-y-4 overflow-y-auto p-4">
      <h1 className="text-2xl font-bold">Usage</h1>
      <p className="text-sm text-muted">
        The usage the packets reported (their <code>usage</code> field) since {usage.since}, the last {usage.days} days.
      </p>
      <Panel headingId="usage-days" title="Cost per day">
        <UsageChart days={usage.by_day} currency={main} />
      </Panel>
      <Panel headingId="usage-totals" title="Totals">
        {/* Every total comes from the same packets: with no day there is no agent or project either. */}
        {usage.by_day.length ? (
          <div className="grid items-start gap-6 lg:grid-cols-2">
            <UsageTable caption="Per agent" keyLabel="Agent" rows={usage.by_agent} />
            <UsageTable caption="Per project" keyLabel="Project" rows={usage.by_project} />
            <UsageTable caption="Per day" keyLabel="Day" rows={usage.by_day} />
          </div>
        ) : (
          <p className="text-sm text-muted">No packet reported usage in the last {usage.days} days.</p>
        )}
      </Panel>
      <Panel headingId="usage-budgets" title="Budgets">
        <Budgets budgets={usage.budgets} canAdminister={abilitiesOf(person.role).administer} />
      </Panel>
    </main>
  );
}
