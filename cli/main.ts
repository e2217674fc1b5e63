import { Command, CommanderError, Option } from "commander";
import { findPacketFiles } from "../lib/client/find-packets";
import { pushPacketFile, pushTargetFromEnv } from "../lib/client/push";
import { TOKEN_SCOPES, type TokenScope } from "../lib/auth/tokens";

/** The `baton` command. Each action is a few lines over lib/; exit codes are returned, not thrown. */
export async function main(argv: string[]): Promise<number> {
  let exitCode = 0;
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
          const flags = outcome.flags.length ? ` flags=${outcome.flags.join(",")}` : "";
          console.log(`${file}: ${what} ${outcome.packetId} thread=${outcome.threadKey}${flags}`);
        } else {
          console.log(`${file}: failed${outcome.status ? ` (HTTP ${outcome.status})` : ""}: ${outcome.message}`);
          exitCode = 1;
        }
      }
    });

  const token = program.command("token").description("Manage API tokens in the local database (DATABASE_URL).");
  token
    .command("create")
    .description("Create a token; it is printed once and stored hashed.")
    .requiredOption("--name <name>", "who or what uses the token")
    .addOption(
      new Option("--scope <scope...>", "scopes the token carries").choices([...TOKEN_SCOPES]).default(["packets:write"]),
    )
    .action(async (options: { name: string; scope: TokenScope[] }) => {
      const { createApiToken } = await import("../lib/auth/tokens");
      await prepareDatabase();
      const { token: secret, summary } = await createApiToken(options.name, options.scope);
      console.error(`Created ${summary.display} (${summary.scopes.join(", ")}). It is shown once; store it now:`);
      console.log(secret);
    });
  token
    .command("list")
    .description("List tokens (prefix...last4, scopes, last use).")
    .action(async () => {
      const { listApiTokens } = await import("../lib/auth/tokens");
      await prepareDatabase();
      const rows = await listApiTokens();
      if (!rows.length) console.log("no tokens; create one with `baton token create --name NAME`");
      for (const row of rows) {
        const state = row.revoked_at ? `revoked ${row.revoked_at}` : `last used ${row.last_used_at ?? "never"}`;
        console.log(`${row.display}  ${row.name}  ${row.scopes.join(",")}  ${state}`);
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
    .command("demo")
    .description("Load a demo fleet of agents into the local database.")
    .action(async () => {
      const { loadDemoFleet } = await import("../lib/demo/fleet");
      await prepareDatabase();
      const summary = await loadDemoFleet();
      console.log(`demo fleet: ${summary.agents} agents, ${summary.threads} threads, ${summary.stored} new versions stored`);
    });

  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    console.error(`baton: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    const { closeDatabase } = await import("../lib/db");
    await closeDatabase();
  }
  return exitCode;
}

async function prepareDatabase(): Promise<void> {
  const { migrateDatabase } = await import("../lib/migrate/index");
  migrateDatabase();
}
