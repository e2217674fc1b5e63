import { spawn } from "node:child_process";
import { migrateDatabase } from "../lib/db/migrate/index";
import { config, printableDatabaseUrl } from "../lib/server/config";
import { buildIfStale } from "./build-if-stale";

// `npm start`: apply pending migrations, build when the sources changed, serve.
const applied = await migrateDatabase();
if (applied.length) console.log(`baton: applied migrations ${applied.join(", ")}`);
const url = config().DATABASE_URL;
console.log(`baton: database ${printableDatabaseUrl(url)}`);
buildIfStale();

const port = process.env.PORT ?? "3000";
// node runs Next directly (not through npx), so Ctrl-C and SIGTERM reach the server.
// Header and request timeouts for Next's own server (docs/decisions/036-request-header-timeout.md).
const server = spawn(process.execPath, ["--import", "./lib/server/http-timeouts.mjs", "node_modules/next/dist/bin/next", "start", "-p", port, ...(process.env.BATON_HOST ? ["-H", process.env.BATON_HOST] : [])], {
  stdio: "inherit",
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.kill(signal));
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
