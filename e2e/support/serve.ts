import { spawn } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import pg from "pg";
import { isPostgresqlUrl } from "../../lib/server/config";
import { migrateDatabase } from "../../lib/db/migrate/index";
import { E2E_DATABASE_URL, E2E_ROOT, E2E_WATCH_DIR } from "./paths";

// The app under test: the production build, a fresh database file and a watched folder.
rmSync(E2E_ROOT, { recursive: true, force: true });
mkdirSync(E2E_WATCH_DIR, { recursive: true });
if (isPostgresqlUrl(E2E_DATABASE_URL)) {
  // A fresh install on PostgreSQL too: everything of the last run goes.
  const client = new pg.Client({ connectionString: E2E_DATABASE_URL });
  await client.connect();
  await client.query("DROP SCHEMA public CASCADE; CREATE SCHEMA public;");
  await client.end();
}
await migrateDatabase(E2E_DATABASE_URL);
const port = process.env.BATON_E2E_PORT ?? "3210";
// node runs Next directly (not through npx), so a signal sent to this script reaches the server;
// with the same header and request timeouts as `npm start` (scripts/start.ts).
const server = spawn(process.execPath, ["--import", "./lib/server/http-timeouts.mjs", "node_modules/next/dist/bin/next", "start", "-p", port, "-H", "127.0.0.1"], {
  stdio: "inherit",
  env: {
    ...process.env,
    DATABASE_URL: E2E_DATABASE_URL,
    BATON_WATCH_DIRS: E2E_WATCH_DIR,
    NEXT_TELEMETRY_DISABLED: "1",
    // A worker's specs share one agent token: a per-token limit that never bites here
    // (the limit itself is tested in testing/hardening/rate-limit.test.ts; decision 021).
    BATON_RATE_LIMIT_PER_MINUTE: process.env.BATON_RATE_LIMIT_PER_MINUTE ?? "1000000",
    BATON_RATE_LIMIT_BURST: process.env.BATON_RATE_LIMIT_BURST ?? "100000",
    // Every spec signs in from 127.0.0.1: the per-address and per-process sign-in buckets
    // are off here (tested in testing/hardening/sign-in-throttle.test.ts; decision 029).
    BATON_SIGN_IN_PER_MINUTE: process.env.BATON_SIGN_IN_PER_MINUTE ?? "0",
    BATON_SIGN_IN_GLOBAL_PER_MINUTE: process.env.BATON_SIGN_IN_GLOBAL_PER_MINUTE ?? "0",
    // Specs' webhook receivers listen on 127.0.0.1, which webhooks reach only when listed (decision 025).
    BATON_WEBHOOK_ALLOWED_TARGETS: "127.0.0.1",
  },
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.kill(signal));
server.on("exit", (code) => process.exit(code ?? 0));
