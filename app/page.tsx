import { ThreadList } from "@/components/threads/thread-list";
import { IngestErrors } from "@/components/threads/ingest-errors";
import { listRecentEvents } from "@/lib/ledger/queries";
import { listActiveThreads } from "@/lib/threads/queries";
import { THREAD_PAGE_MAX } from "@/lib/threads/filters";

export const dynamic = "force-dynamic";

export default async function HomePage() {
  const [{ threads }, ingestErrors] = await Promise.all([
    listActiveThreads({ severity: [], flag: [], limit: THREAD_PAGE_MAX }),
    listRecentEvents(["ingest_error"], 5),
  ]);
  return (
    <main className="mx-auto max-w-4xl p-6">
      <header className="mb-6 flex items-baseline justify-between">
        <h1 className="text-2xl font-bold">Baton</h1>
        <p className="text-sm text-zinc-500">{threads.length} active threads</p>
      </header>
      <IngestErrors events={ingestErrors} />
      {threads.length ? (
        <ThreadList threads={threads} />
      ) : (
        <section className="rounded-lg bg-white p-6 shadow-sm ring-1 ring-zinc-200 dark:bg-zinc-900 dark:ring-zinc-800">
          <h2 className="text-lg font-semibold">No handoff packets yet</h2>
          <p className="mt-2">Create a token, then send a packet:</p>
          <pre className="mt-2 overflow-x-auto rounded bg-zinc-100 p-3 text-sm dark:bg-zinc-800">
            {`npx baton token create --name my-agent --scope packets:write
BATON_TOKEN=<token> npx baton push outputs/handoff/`}
          </pre>
          <p className="mt-2">
            Or load a demo fleet: <code className="rounded bg-zinc-100 px-1 dark:bg-zinc-800">npx baton demo</code>
          </p>
        </section>
      )}
    </main>
  );
}
