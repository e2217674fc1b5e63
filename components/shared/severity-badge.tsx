import type { Severity } from "@/lib/contract/severity";
import { Badge } from "@/components/ui/badge";

/** The one severity palette: badges, and the timeline's version markers. */
export const SEVERITY_STYLES: Record<Severity, string> = {
  critical: "bg-red-700 text-white",
  high: "bg-orange-700 text-white",
  medium: "bg-amber-300 text-amber-950",
  low: "bg-sky-200 text-sky-950",
  info: "bg-zinc-200 text-zinc-800",
};

export function SeverityBadge({ severity }: { severity: Severity | null }) {
  if (!severity) {
    return <Badge className="text-muted ring-1 ring-zinc-300">no risks</Badge>;
  }
  return <Badge className={`font-semibold uppercase ${SEVERITY_STYLES[severity]}`}>{severity}</Badge>;
}
