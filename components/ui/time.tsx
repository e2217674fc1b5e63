import { formatAge } from "@/lib/browser/age";
import { formatMoment } from "@/lib/browser/moment";

/**
 * The one way a moment is shown (docs/decisions/033-component-layer.md): "Nov 29 09:12 UTC",
 * the same text on the server and in the browser; the full ISO time in the title.
 */
export function Moment({ iso, className }: { iso: string; className?: string }) {
  return (
    <time dateTime={iso} title={iso} className={className}>
      {formatMoment(iso)}
    </time>
  );
}

/** How long ago, measured from `now` (when the shown data was made, so server and browser agree): "5 min ago". */
export function Age({ iso, now, className }: { iso: string; now: number; className?: string }) {
  return (
    <time dateTime={iso} title={formatMoment(iso)} className={className}>
      {formatAge(now - Date.parse(iso))} ago
    </time>
  );
}
