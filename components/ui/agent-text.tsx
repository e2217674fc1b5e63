import { Fragment } from "react";
import { revealInvisible } from "@/lib/contract/invisible";

interface AgentTextProps {
  /** A string an agent sent: hostile until shown otherwise. */
  text: string;
  /** Text shown with white-space: pre-wrap keeps its line feeds and tabs; elsewhere they are marked too. */
  multiline?: boolean;
  className?: string;
}

/**
 * Agent-provided text, bidi-safe (docs/decisions/034-agent-text.md): isolated from what
 * surrounds it (<bdi dir="auto">: its direction cannot spill into the page's), and every
 * invisible or reordering character (bidi controls, zero-width and control characters)
 * shown as a visible marker such as ⟨U+202E⟩, named in its title. React escapes the rest.
 */
export function AgentText({ text, multiline = false, className }: AgentTextProps) {
  return (
    <bdi dir="auto" data-agent-text="" className={className}>
      {revealInvisible(text, { multiline }).map((part, index) =>
        part.kind === "text" ? (
          part.text
        ) : (
          <span
            key={index}
            title={part.title}
            data-invisible={part.code}
            className="mx-px rounded-sm bg-amber-100 px-0.5 font-mono text-[0.8em] font-normal text-amber-950 not-italic dark:bg-amber-900 dark:text-amber-50"
          >
            {part.marker}
          </span>
        ),
      )}
    </bdi>
  );
}

/** Several agent strings in a row ("project · branch · topic"), each isolated, so one cannot reorder the separators. Empty ones are left out. */
export function AgentTextList({ items, separator = " · ", className }: { items: readonly (string | null | undefined)[]; separator?: string; className?: string }) {
  const shown = items.filter((item): item is string => Boolean(item));
  return (
    <span className={className}>
      {shown.map((item, index) => (
        <Fragment key={index}>
          {index ? separator : null}
          <AgentText text={item} />
        </Fragment>
      ))}
    </span>
  );
}
