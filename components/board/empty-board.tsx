/** What an empty board says: how to send a first packet, and how to load the demo fleet. */
export function EmptyBoard() {
  return (
    <section aria-labelledby="empty-board" className="mx-auto max-w-2xl rounded-lg bg-white p-6 shadow-sm ring-1 ring-zinc-200 dark:bg-zinc-900 dark:ring-zinc-800">
      <h2 id="empty-board" className="text-lg font-semibold">
        No handoff packets yet
      </h2>
      <p className="mt-2">Create a token for an agent, then send its packet:</p>
      <pre className="mt-2 overflow-x-auto rounded bg-zinc-100 p-3 text-sm dark:bg-zinc-800">
        {`npx baton token create --name my-agent --scope packets:write
BATON_TOKEN=<token> npx baton push outputs/handoff/`}
      </pre>
      <p className="mt-3">
        Or let Baton watch a folder: start it with <code className="rounded bg-zinc-100 px-1 dark:bg-zinc-800">BATON_WATCH_DIRS=/path/to/agents</code>.
      </p>
      <p className="mt-3">
        To look around first, load a demo fleet of 34 agents: <code className="rounded bg-zinc-100 px-1 dark:bg-zinc-800">npx baton demo</code>
      </p>
    </section>
  );
}
