/** Runs once when the server starts: begins watching BATON_WATCH_DIRS. */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startServerBackground } = await import("./lib/server/background");
  await startServerBackground();
}
