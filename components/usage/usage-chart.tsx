import { AgentText } from "@/components/ui/agent-text";
import type { UsageTotalDto } from "@/lib/views/usage/dto";

export const money = (amount: number, currency: string | null) => `${amount.toFixed(2)} ${currency ?? ""}`.trim();

/** Cost per day as bars, one currency (the most used one); a table beside it says the same in text. */
export function UsageChart({ days, currency }: { days: UsageTotalDto[]; currency: string | null }) {
  const shown = days.filter((day) => day.currency === currency);
  if (!shown.length) return <p className="text-sm text-muted">No cost reported in this window.</p>;
  const highest = Math.max(...shown.map((day) => day.cost), 0.0001);
  const width = 24;
  const height = 120;
  return (
    <figure className="overflow-x-auto">
      <svg role="img" aria-labelledby="usage-chart-caption" width={shown.length * width} height={height + 20} className="text-sky-700 dark:text-sky-300">
        {shown.map((day, index) => {
          const bar = Math.max(1, Math.round((day.cost / highest) * height));
          return (
            <g key={day.key ?? index}>
              <rect x={index * width + 4} y={height - bar} width={width - 8} height={bar} fill="currentColor">
                <title>{`${day.key}: ${money(day.cost, currency)}`}</title>
              </rect>
              <text x={index * width + width / 2} y={height + 14} textAnchor="middle" className="fill-current text-[9px] text-muted">
                {day.key?.slice(8) ?? ""}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption id="usage-chart-caption" className="text-xs text-muted">
        Cost per day in {currency ?? "no currency"}, {shown[0]!.key} to {shown.at(-1)!.key}; the highest day {money(highest, currency)}.
      </figcaption>
    </figure>
  );
}

export function UsageTable({ caption, rows, keyLabel }: { caption: string; rows: UsageTotalDto[]; keyLabel: string }) {
  return (
    <table className="w-full text-sm">
      <caption className="mb-1 text-left text-sm font-semibold">{caption}</caption>
      <thead>
        <tr className="text-left text-xs text-muted">
          <th scope="col">{keyLabel}</th>
          <th scope="col" className="text-right">Packets</th>
          <th scope="col" className="text-right">Input tokens</th>
          <th scope="col" className="text-right">Output tokens</th>
          <th scope="col" className="text-right">Cost</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row, index) => (
          <tr key={`${row.key}-${row.currency}-${index}`} className="border-t border-line">
            <td className="py-1 font-mono wrap-anywhere">{row.key === null ? "(none)" : <AgentText text={row.key} />}</td>
            <td className="text-right">{row.packets}</td>
            <td className="text-right">{row.input_tokens.toLocaleString("en")}</td>
            <td className="text-right">{row.output_tokens.toLocaleString("en")}</td>
            <td className="text-right">{money(row.cost, row.currency)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
