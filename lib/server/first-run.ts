import "server-only";
import { hasAnyUser } from "../auth/users";
import { issueSetupCode } from "../auth/setup-code";
import { config } from "./config";

/**
 * At start, on an install without accounts: make the one-time setup code and
 * print, once, where to use it (decision 030). Never logged again; the server
 * keeps only its hash. A database that cannot be read yet gets a code too.
 */
export async function announceFirstRun(print: (line: string) => void = console.log): Promise<void> {
  const fresh = await hasAnyUser().then(
    (any) => !any,
    () => true,
  );
  if (!fresh) return;
  const code = issueSetupCode();
  // Without BATON_PUBLIC_URL, the port this server listens on (npm start passes PORT).
  const base = process.env.BATON_PUBLIC_URL ? config().BATON_PUBLIC_URL : `http://localhost:${process.env.PORT ?? 3000}`;
  print(`baton: first run: open ${base}/setup?code=${code} to create the admin (from this machine, /setup needs no code)`);
}
