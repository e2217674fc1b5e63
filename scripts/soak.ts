import { spawnSync } from "node:child_process";

/**
 * `npm run test:soak`: the soaks at full length (testing/soak.ts): the 5,000-body
 * ingest fuzz, the 5,000-item volume test, the overload run (60 s at twice the sustainable rate) and five SIGKILLs of
 * the server. `npm test` runs the same files in their short form. Run it by hand, and
 * before each benchmark report.
 */
const env = { ...process.env, BATON_SOAK: "full" };
const run = (command: string, args: string[]) => spawnSync(command, args, { stdio: "inherit", env }).status ?? 1;

const started = Date.now();
let status = run("npx", ["vitest", "run", "testing/hardening/fuzz-ingest.test.ts", "testing/hardening/volume.test.ts", "lib/views/risks/paging.test.ts"]);
status ||= run("npx", ["tsx", "scripts/build-if-stale.ts"]);
status ||= run("npx", ["playwright", "test", "e2e/overload.spec.ts", "e2e/crash-safety.spec.ts"]);
console.log(`test:soak: ${status ? "FAILED" : "passed"} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
process.exit(status);
