/** What an empty board says: how to send a first packet, and how to load the demo fleet. */
export function EmptyBoard() {
  return (
    <section aria-labelledby="empty-board" className="mx-auto max-w-2xl rounded-lg bg-surface p-6 shadow-sm ring-1 ring-line">
      <h2 id="empty-board" className="text-lg font-semibold">
        No handoff packets yet
      </h2>
      <p className="mt-2">Create a token for an agent, then send its packet:</p>
      <pre tabIndex={0} className="mt-2 overflow-x-auto rounded bg-sunken p-3 text-sm">
        {`npx baton token create --name my-agent --scope packets:write
BATON_TOKEN=<token> npx baton push outputs/handoff/`}
      </pre>
      <p className="mt-3">
        Or let Baton watch a folder: start it with <code className="rounded bg-sunken px-1">BATON_WATCH_DIRS=/path/to/agents</code>.
      </p>
      <p className="mt-3">
        To look around first, load a demo fleet of 34 agents: <code className="rounded bg-sunken px-1">npx baton demo</code>
      </p>
    </section>
  );
}
