import type { Metadata } from "next";
import { cache } from "react";
import Link from "next/link";
import { notFound } from "next/navigation";
import { LedgerList } from "@/components/thread/ledger-list";
import { PacketSections } from "@/components/thread/packet-sections";
import { Panel } from "@/components/ui/panel";
import { ThreadLive } from "@/components/thread/thread-live";
import { VersionHistory } from "@/components/thread/version-history";
import { VerdictSection } from "@/components/thread/verdict-section";
import { readVersionVerdicts } from "@/lib/views/verdict/version";
import { WorkChips } from "@/components/board/work-chips";
import { UsageChip } from "@/components/usage/usage-chip";
import { loadVersionUsage } from "@/lib/views/usage/version-usage";
import { loadThreadWork } from "@/lib/integrations/thread-work";
import { workFlags } from "@/lib/integrations/work-flags";
import { SeverityBadge } from "@/components/shared/severity-badge";
import { BatonError } from "@/lib/core/errors";
import { listThreadEvents } from "@/lib/events/queries";
import { diffVersions } from "@/lib/views/threads/diff";
import { threadHref } from "@/lib/views/threads/href";
import { getPacket } from "@/lib/views/threads/queries";
import { loadThreadDetail } from "@/lib/views/threads/flagged";
import { currentPagePerson, requirePagePerson } from "@/lib/auth/page-person";
import { visibleText } from "@/lib/contract/invisible";
import { abilitiesOf } from "@/lib/auth/roles";
import { AnswerForm } from "@/components/human/answer-form";
import { DecisionControls } from "@/components/human/decision-controls";
import { HumanSectionView } from "@/components/human/human-section-view";
import { AgentText, AgentTextList } from "@/components/ui/agent-text";
import { buttonClass } from "@/components/ui/button";

export const dynamic = "force-dynamic";

type Params = Promise<{ key: string }>;
type SearchParams = Promise<Record<string, string | string[] | undefined>>;

/**
 * Read once per request: the title and the page both need it. Reports can change on disk:
 * the page reads them again (refreshing the board's cached badge) before the flags are computed.
 */
const threadDetail = cache((key: string) => loadThreadDetail(key, { freshVerdict: true }));

async function findThread(key: string) {
  try {
    return await threadDetail(key);
  } catch (error) {
    if (error instanceof BatonError && error.code === "not_found") notFound();
    throw error;
  }
}

/** The tab names the thread (only for a signed-in person: a title is no place to leak a topic). */
export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  // Unlike the page's, these params arrive decoded (a key may hold "%"): the key as given
  // first, then its decoded form in case a Next version encodes them here too.
  const raw = (await params).key;
  if (!(await currentPagePerson())) return { title: "Thread" };
  for (const key of [raw, decodedOrNull(raw)]) {
    if (key === null) continue;
    const thread = await threadDetail(key).catch(() => null);
    if (thread) return { title: `${visibleText(thread.topic ?? thread.active_packet.task_id ?? key)} · Thread` };
  }
  return { title: "Thread" };
}

const pageTime = () => Date.now();

function decodedOrNull(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/** One thread: the active packet in sections, its history with diffs, its ledger, raw JSON and downloads. */
export default async function ThreadPage({ params, searchParams }: { params: Params; searchParams: SearchParams }) {
  // Pages get their params still percent-encoded (route handlers get them decoded):
  // vercel/next.js#64952. Malformed escapes never get here (proxy.ts answers 400).
  const key = decodeURIComponent((await params).key);
  const person = await requirePagePerson(threadHref(key));
  const canAct = abilitiesOf(person.role).act;
  const query = await searchParams;
  const thread = await findThread(key);
  const ids = new Set(thread.versions.map((version) => version.id));
  const pick = (value: unknown) => (typeof value === "string" && ids.has(value) ? value : null);
  const to = pick(query.to) ?? thread.active_packet.id;
  const from = pick(query.from) ?? thread.versions.find((version) => version.id !== to)?.id ?? null;

  const [active, events, fromPacket, toPacket, work, usage] = await Promise.all([
    getPacket(thread.active_packet.id),
    listThreadEvents(key),
    from ? getPacket(from) : null,
    from ? getPacket(to) : null,
    loadThreadWork([key]).then((found) => found.get(key) ?? null),
    loadVersionUsage([thread.active_packet.id]).then((found) => found.get(thread.active_packet.id) ?? null),
  ]);
  const diff = fromPacket && toPacket ? diffVersions(fromPacket.canonical, toPacket.canonical) : null;
  // Read afresh by threadDetail a moment ago: the flags above were computed from this reading.
  const verdict = (await readVersionVerdicts([active.id])).get(active.id)!;
  const base = threadHref(key);
  // Ages on this page are measured from when it was made: the browser shows the server's words.
  const now = pageTime();

  return (
    <main id="main" className="mx-auto w-full max-w-6xl flex-1 space-y-4 overflow-y-auto p-4">
      <ThreadLive threadKey={key} />
      <nav aria-label="Breadcrumb" className="text-sm">
        <Link href="/" prefetch={false} className="text-link underline">
          Board
        </Link>{" "}
        / <AgentText className="font-mono" text={key} />
      </nav>
      <header className="flex flex-wrap items-center gap-3">
        <h1 className="text-2xl font-bold break-all">
          <AgentText text={thread.topic ?? thread.active_packet.task_id ?? key} />
        </h1>
        <SeverityBadge severity={thread.active_packet.highest_severity} />
        <AgentTextList className="text-sm text-muted" items={[thread.agent, thread.project, thread.branch]} />
        <WorkChips work={work} threadKey={key} name={thread.agent ? `${thread.agent} (${key})` : key} canAct={canAct} />
        <UsageChip usage={usage} />
        <span className="ml-auto flex gap-2 text-sm">
          <a href={`${base}/handoff.json`} download="handoff.json" className={buttonClass()}>
            Download handoff.json
          </a>
          <a href={`${base}/handoff.md`} download="handoff.md" className={buttonClass()}>
            Download handoff.md
          </a>
        </span>
      </header>
      <Panel headingId="people" title="People">
        <div className="space-y-3">
          <HumanSectionView human={thread.human} now={now} />
          {canAct ? (
            <DecisionControls
              threadKey={key}
              packetId={thread.active_packet.id}
              revision={thread.human.revision}
              decision={thread.human.decision}
              name={thread.agent ? `${thread.agent} (${key})` : key}
              quotes={workFlags(work ?? undefined).map((flag) => flag.reason)}
            />
          ) : null}
        </div>
      </Panel>
      <PacketSections
        packet={active.canonical}
        flags={thread.active_packet.flags}
        flagsComputedAt={thread.active_packet.flags_computed_at}
        receivedAt={thread.active_packet.received_at}
        now={now}
        answerFor={(question) => {
          const answers = thread.human.answers.filter((answer) => answer.question_id === question.id);
          const latest = answers.at(-1);
          if (latest) {
            return (
              <span className="mt-1 block rounded bg-emerald-50 p-1.5 dark:bg-emerald-950">
                <span className="font-semibold">Answer:</span> <AgentText className="whitespace-pre-wrap" text={latest.answer} multiline />{" "}
                <span className="text-xs text-muted">
                  (<AgentText text={latest.by} />)
                </span>
              </span>
            );
          }
          return canAct ? <AnswerForm threadKey={key} packetId={thread.active_packet.id} revision={thread.human.revision} question={question} /> : null;
        }}
      />
      <VerdictSection reading={verdict} />
      <VersionHistory thread={thread} from={from} to={to} diff={diff} now={now} />
      <LedgerList events={events} now={now} />
      <Panel headingId="raw" title="Raw JSON (as received)">
        {/* Focusable: a scrolling box must be reachable by keyboard (WCAG 2.1.1). */}
        <pre tabIndex={0} className="max-h-96 overflow-auto rounded bg-sunken p-3 text-xs">{JSON.stringify(active.received, null, 2)}</pre>
      </Panel>
    </main>
  );
}
