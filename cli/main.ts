import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { TOKEN_SCOPES, type TokenScope } from "../lib/auth/token-scopes";
import { addUserCommand, type PasswordSource } from "./user-command";
import { addCheckCommand } from "./check-command";
import { addGenerateCommand } from "./generate-command";
import { addWaitCommand } from "./wait-command";

/**
 * The `baton` command. Each action is a few lines over lib/; exit codes are returned, not thrown.
 * Each action imports what it runs when it runs (the database client, the packet code, the MCP
 * server): a process runs one command, and loading every command's modules cost each start about a second.
 */
export async function main(argv: string[], passwords: PasswordSource = { stdin: process.stdin, prompts: process.stderr }): Promise<number> {
  let exitCode = 0;
  let openedDatabase = false;
  const prepareDatabase = async () => {
    const { migrateDatabase } = await import("../lib/db/migrate/index");
    openedDatabase = true;
    await migrateDatabase();
  };
  const program = new Command()
    .name("baton")
    .description("Send handoff packets to Baton and manage a local Baton.")
    .exitOverride()
    .showHelpAfterError();

  program
    .command("push")
    .description("POST packet files to Baton (BATON_URL, BATON_TOKEN). A folder sends every handoff.json below it.")
    .argument("<paths...>", "packet files or folders")
    .action(async (paths: string[]) => {
      const { findPacketFiles } = await import("./sync/find-packets");
      const { describePushed, pushPacketFile, pushTargetFromEnv } = await import("./sync/push");
      const target = pushTargetFromEnv();
      const files = await findPacketFiles(paths);
      if (!files.length) {
        console.error("baton push: no packet files found");
        exitCode = 1;
        return;
      }
      for (const file of files) {
        const outcome = await pushPacketFile(target, file);
        if (outcome.ok) {
          const what = outcome.duplicate ? "duplicate" : "stored";
          console.log(`${file}: ${what} ${outcome.packetId} thread=${outcome.threadKey}${describePushed(outcome)}`);
        } else {
          console.log(`${file}: failed${outcome.status ? ` (HTTP ${outcome.status})` : ""}: ${outcome.message}`);
          exitCode = 1;
        }
      }
    });

  program
    .command("pull")
    .description(
      "Print a thread's merged handoff packet (the agent's fields plus Baton's human section) as JSON, or write it to a file.",
    )
    .argument("<thread>", "the thread key, e.g. acme@main")
    .option("-o, --output <file>", "write the packet to this file (atomically: it is replaced whole or not at all)")
    .option("--server <url>", "Baton's URL (default: BATON_URL, else http://localhost:3000)")
    .option("--token <token>", "an API token with the packets:read scope (default: BATON_TOKEN)")
    .addHelpText(
      "after",
      `
The packet comes from GET /api/v1/threads/{thread}/handoff and is printed with a
2-space indent and a final newline. On failure the server's error message goes to
stderr and the exit code is 1 (a thread Baton does not know is a 404).
BATON_TOKEN keeps the token out of your shell history and the process list.

Examples:
  BATON_TOKEN=btn_... baton pull acme@main
  baton pull acme@main -o outputs/handoff/handoff.json --server https://baton.example`,
    )
    .action(async (thread: string, options: { output?: string; server?: string; token?: string }) => {
      const { formatPacket, pullHandoff, pullTarget } = await import("./sync/pull");
      const { writeFileAtomic } = await import("../lib/server/fs/atomic-write");
      const outcome = await pullHandoff(pullTarget(options), thread);
      if (!outcome.ok) {
        console.error(`baton pull: failed${outcome.status ? ` (HTTP ${outcome.status})` : ""}: ${outcome.message}`);
        exitCode = 1;
        return;
      }
      const text = formatPacket(outcome.packet);
      if (!options.output) {
        process.stdout.write(text);
        return;
      }
      try {
        await writeFileAtomic(options.output, text);
      } catch (error) {
        console.error(`baton pull: cannot write ${options.output}: ${(error as Error).message}`);
        exitCode = 1;
        return;
      }
      console.error(`baton pull: wrote ${options.output} (thread ${thread}${outcome.packetId ? `, packet ${outcome.packetId}` : ""})`);
    });

  const token = program.command("token").description("Manage API tokens in the local database (DATABASE_URL).");
  token
    .command("create")
    .description("Create a token; it is printed once and stored hashed.")
    .requiredOption("--name <name>", "who or what uses the token")
    .addOption(
      new Option("--scope <scope...>", "scopes the token carries").choices([...TOKEN_SCOPES]).default(["packets:write"]),
    )
    .option(
      "--project <name>",
      "bind the token to a project: its packets without a project take this one, and it writes only this project's threads",
    )
    .action(async (options: { name: string; scope: TokenScope[]; project?: string }) => {
      const { createApiToken } = await import("../lib/auth/tokens");
      await prepareDatabase();
      const { token: secret, summary } = await createApiToken(options.name, options.scope, "cli", options.project);
      const bound = summary.project === null ? "" : `, project ${summary.project}`;
      console.error(`Created ${summary.display} (${summary.scopes.join(", ")}${bound}). It is shown once; store it now:`);
      console.log(secret);
    });
  token
    .command("list")
    .description("List tokens (prefix...last4, name, scopes, project, last use).")
    .action(async () => {
      const { listApiTokens } = await import("../lib/auth/tokens");
      await prepareDatabase();
      const rows = await listApiTokens();
      if (!rows.length) console.log("no tokens; create one with `baton token create --name NAME`");
      for (const row of rows) {
        const state = row.revoked_at ? `revoked ${row.revoked_at}` : `last used ${row.last_used_at ?? "never"}`;
        console.log(`${row.display}  ${row.name}  ${row.scopes.join(",")}  ${row.project === null ? "any project" : `project ${row.project}`}  ${state}`);
      }
    });
  token
    .command("revoke")
    .description("Revoke a token by id or prefix; it fails from the next request.")
    .argument("<token>", "the token's id or its prefix as `baton token list` shows it")
    .action(async (idOrPrefix: string) => {
      const { revokeApiToken } = await import("../lib/auth/tokens");
      await prepareDatabase();
      const summary = await revokeApiToken(idOrPrefix);
      console.log(`revoked ${summary.display} (${summary.name})`);
    });

  program
    .command("ledger")
    .description("Check the local database (DATABASE_URL).")
    .command("check")
    .description(
      "Check, read-only (safe while Baton runs), that every stored version is whole and the ledger and the threads agree; exits 1 on a problem.",
    )
    .action(async () => {
      const { checkDatabaseFile } = await import("../lib/events/consistency");
      const { config, sqliteFilePath } = await import("../lib/server/config");
      const url = config().DATABASE_URL;
      if (!url.startsWith("file:")) throw new Error("`baton ledger check` reads a SQLite file (DATABASE_URL=file:...).");
      const report = checkDatabaseFile(sqliteFilePath(url));
      const { counts } = report;
      console.log(`integrity: ${report.integrity}`);
      console.log(`${counts.threads} threads, ${counts.versions} versions, ${counts.ledgerEvents} ledger events, ${counts.risks} risks, ${counts.questions} questions, ${counts.failedAttempts} failed attempts`);
      if (report.versionsAwaitingFailedAttempts) {
        console.log(`${report.versionsAwaitingFailedAttempts} versions wait for the lessons backfill (runs at server start)`);
      }
      for (const problem of report.problems) console.log(`${problem.kind}: ${problem.detail}`);
      if (report.problemCount > report.problems.length) console.log(`... and ${report.problemCount - report.problems.length} more problems`);
      console.log(report.ok ? "consistent" : `${report.problemCount} problems`);
      exitCode = report.ok ? 0 : 1;
    });

  addUserCommand(program, passwords, prepareDatabase);
  addCheckCommand(program, (code) => (exitCode = code));
  addGenerateCommand(program, (code) => (exitCode = code));
  addWaitCommand(program, (code) => (exitCode = code));

  program
    .command("mcp")
    .description("Serve Baton's MCP tools (handoff, pull, ask, wait_for_decision, status) over stdio for an agent (BATON_URL, BATON_TOKEN).")
    .option("--server <url>", "Baton's URL (default: BATON_URL, else http://localhost:3000)")
    .option("--token <token>", "an API token: packets:read, and packets:write for handoff and ask (default: BATON_TOKEN)")
    .addHelpText("after", "\nStarted by the agent tool, not by hand: see docs/integrations.md#mcp for each tool's setup.")
    .action(async (options: { server?: string; token?: string }) => {
      const { serveMcpOverStdio } = await import("./mcp/stdio");
      await serveMcpOverStdio(options);
    });

  program
    .command("demo")
    .description("Load a demo fleet of agents into the local database.")
    .addOption(
      new Option("--agents <n>", "how many agents (1 to 2000; default 34, the demo's own mix repeats)").argParser((value) => {
          const agents = Number(value);
          if (!Number.isInteger(agents) || agents < 1 || agents > 2000) throw new InvalidArgumentError("--agents must be a whole number from 1 to 2000.");
          return agents;
        }),
    )
    .action(async (options: { agents?: number }) => {
      const { loadDemoFleet } = await import("./demo/fleet");
      await prepareDatabase();
      const summary = await loadDemoFleet(undefined, options.agents);
      console.log(`demo fleet: ${summary.agents} agents, ${summary.threads} threads, ${summary.stored} new versions stored`);
    });

  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    console.error(`baton: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    if (openedDatabase) {
      const { closeDatabase } = await import("../lib/db/client");
      await closeDatabase();
    }
  }
  return exitCode;
}
