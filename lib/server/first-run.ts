import { hasAnyUser } from "../auth/users";
import { issueSetupCode } from "../auth/setup-code";
import { config } from "../config";

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
  print(`baton: first run: open ${config().BATON_PUBLIC_URL}/setup?code=${code} to create the admin (from this machine, /setup needs no code)`);
}
