import type { CardUsageDto } from "@/lib/views/usage/dto";
import { AgentText } from "@/components/ui/agent-text";

const compact = (count: number) => (count >= 1_000_000 ? `${(count / 1_000_000).toFixed(1)}M` : count >= 1_000 ? `${(count / 1_000).toFixed(1)}k` : String(Math.round(count)));

/** What the packet reported it cost: cost, tokens in and out, and the model in the tooltip. */
export function UsageChip({ usage }: { usage: CardUsageDto | null }) {
  if (!usage) return null;
  const tokens = usage.input_tokens !== null || usage.output_tokens !== null ? `${compact(usage.input_tokens ?? 0)} in / ${compact(usage.output_tokens ?? 0)} out` : null;
  const minutes = usage.duration_ms !== null ? `${Math.max(1, Math.round(usage.duration_ms / 60_000))} min` : null;
  const parts = [usage.cost ? `${usage.cost.amount.toFixed(2)} ${usage.cost.currency}` : null, tokens, minutes].filter(Boolean);
  return (
    <span data-testid="usage-chip" className="text-xs text-muted" aria-label={`Session usage: ${parts.join(", ")}`}>
      {parts.join(" · ")}
      {usage.model ? (
        <>
          {" · "}
          <AgentText text={usage.model} />
        </>
      ) : null}
    </span>
  );
}
