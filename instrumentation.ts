/**
 * Runs once when the server starts: stamps every request with its socket's address
 * (for the sign-in throttle, lib/http/client-address.ts), then begins watching BATON_WATCH_DIRS.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { installClientAddressHeader } = await import("./lib/http/client-address");
  await installClientAddressHeader();
  const { startServerBackground } = await import("./lib/server/background");
  await startServerBackground();
}
