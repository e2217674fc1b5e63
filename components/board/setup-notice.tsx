/**
 * A configuration problem is told once, with its fix, not as a flag on every card: verdict
 * reports are read from a thread's workspace root, and none is known (docs/configuration.md).
 */
export function SetupNotice() {
  // One line on any screen: what is wrong and what it means; the fix one click away.
  return (
    <section aria-labelledby="setup-notice" className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-950 ring-1 ring-amber-200 dark:bg-amber-950 dark:text-amber-100 dark:ring-amber-900">
      <details>
        <summary className="min-h-6 cursor-pointer">
          <h2 id="setup-notice" className="inline font-semibold">
            Verdict reports cannot be read:
          </h2>{" "}
          no workspace root is configured for some threads, so their cards say &ldquo;verdict: missing&rdquo;. <span className="underline">How to fix</span>
        </summary>
        <p className="mt-1">
          Set <code className="font-mono">BATON_WORKSPACE_ROOTS=project=/abs/path</code> (comma-separated, one per project) or let Baton watch the agents&apos;
          folders with <code className="font-mono">BATON_WATCH_DIRS</code>, which records each thread&apos;s root; see docs/configuration.md.
        </p>
      </details>
    </section>
  );
}
