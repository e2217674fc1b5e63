import type { HumanSection } from "@/lib/human/section";

const when = (at: string) => at.replace("T", " ").slice(0, 16);

/** What people decided, answered and asked on the active packet: the `human` section the next session reads. */
export function HumanSectionView({ human }: { human: HumanSection }) {
  if (human.revision === 0) return <p className="text-sm text-zinc-500">No one has acted on this packet yet.</p>;
  return (
    <div className="space-y-2 text-sm">
      {human.decision ? (
        <p>
          <span className="font-semibold">{human.decision.kind === "approved" ? "Approved" : "Intervened"}</span> by {human.decision.by} at{" "}
          <time dateTime={human.decision.at}>{when(human.decision.at)}</time>
          {human.decision.note ? `: ${human.decision.note}` : ""}
        </p>
      ) : null}
      {human.questions.length ? (
        <div>
          <h3 className="font-semibold">Instructions for the next session</h3>
          <ul className="list-disc pl-5">
            {human.questions.map((question) => (
              <li key={question.id}>
                {question.blocking ? <span className="mr-1 rounded bg-amber-700 px-1 text-xs text-white">blocking</span> : null}
                <span className="whitespace-pre-wrap">{question.text}</span> <span className="text-xs text-zinc-500">({question.by}, {when(question.at)})</span>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <p className="text-xs text-zinc-500">Revision {human.revision}, updated {human.updated_at ? when(human.updated_at) : "never"}.</p>
    </div>
  );
}
