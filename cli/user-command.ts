import type { Readable, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { Option, type Command } from "commander";
import { ROLES, type Role } from "../lib/auth/roles";

/** Where `baton user` reads a password from when BATON_PASSWORD is not set. */
export interface PasswordSource {
  stdin: Readable & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  /** Where prompts go when stdin is a terminal. */
  prompts: Writable;
}

const ACTOR = "cli";
const NO_PASSWORD = "password: none given; set BATON_PASSWORD or send the password as the first line of stdin (never as an argument)";

/**
 * The first line of a stream (without its line ending), or everything up to
 * its end when there is no newline. Closes the stream after that line: a
 * paused pipe still holds the process open, so a writer that keeps the pipe
 * open would otherwise keep the command waiting.
 */
export function readFirstLine(stream: Readable): Promise<{ line: string; empty: boolean }> {
  return new Promise((resolve, reject) => {
    const decoder = new StringDecoder("utf8");
    let text = "";
    let received = false;
    const finish = (line: string) => {
      stream.off("data", onData);
      stream.off("end", onEnd);
      stream.off("error", onError);
      stream.destroy();
      resolve({ line: line.replace(/\r$/, ""), empty: !received });
    };
    const onData = (chunk: Buffer | string) => {
      received = true;
      text += typeof chunk === "string" ? chunk : decoder.write(chunk);
      const at = text.indexOf("\n");
      if (at >= 0) finish(text.slice(0, at));
    };
    const onEnd = () => finish(text + decoder.end());
    const onError = (error: Error) => {
      stream.off("data", onData);
      stream.off("end", onEnd);
      reject(error);
    };
    stream.on("data", onData);
    stream.once("end", onEnd);
    stream.once("error", onError);
  });
}

/** Reads a line from a terminal without echoing it (raw mode); Ctrl-C cancels. */
function readHidden(source: PasswordSource, prompt: string): Promise<string> {
  const { stdin, prompts } = source;
  prompts.write(prompt);
  stdin.setRawMode?.(true);
  return new Promise((resolve, reject) => {
    const decoder = new StringDecoder("utf8");
    let text = "";
    const finish = () => {
      stdin.off("data", onData);
      stdin.setRawMode?.(false);
      stdin.pause();
      prompts.write("\n");
    };
    const onData = (chunk: Buffer | string) => {
      for (const char of typeof chunk === "string" ? chunk : decoder.write(chunk)) {
        if (char === "\r" || char === "\n" || char === "\u0004") {
          finish();
          resolve(text);
          return;
        }
        if (char === "\u0003") {
          finish();
          reject(new Error("cancelled; nothing changed"));
          return;
        }
        if (char === "\u007f" || char === "\b") text = Array.from(text).slice(0, -1).join("");
        else text += char;
      }
    };
    stdin.on("data", onData);
    stdin.resume();
  });
}

/**
 * The password for `username`: BATON_PASSWORD when set, else the first line of
 * stdin, asked for twice without echo when stdin is a terminal. Never argv: it
 * would show in `ps` and the shell's history.
 */
export async function readPassword(source: PasswordSource, username: string): Promise<string> {
  const fromEnv = process.env.BATON_PASSWORD;
  if (fromEnv !== undefined) return fromEnv;
  if (source.stdin.isTTY && source.stdin.setRawMode) {
    const first = await readHidden(source, `Password for ${username} (not shown): `);
    if (!first) throw new Error(NO_PASSWORD);
    const again = await readHidden(source, "Same password again: ");
    if (again !== first) throw new Error("the two passwords differ; nothing changed");
    return first;
  }
  const { line, empty } = await readFirstLine(source.stdin);
  if (empty) throw new Error(NO_PASSWORD);
  return line;
}

const pad = (rows: string[][]) => {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join("  "));
};

/**
 * `baton user create|password|list`: people's accounts in the local database,
 * for a headless setup and for an admin who is locked out. The ledger records
 * these as done by "cli".
 */
export function addUserCommand(program: Command, source: PasswordSource, prepareDatabase: () => Promise<void>): void {
  // program.command(), not addCommand(): the subcommands inherit exitOverride and the help settings.
  const user = program.command("user").description("Manage people's accounts in the local database (DATABASE_URL).");
  const passwordHelp = `
The password is read from BATON_PASSWORD when set, else from the first line of
stdin (asked for without echo on a terminal); never from an argument.`;

  user
    .command("create")
    .description("Create an account (on a fresh install, an admin created this way is the first admin).")
    .argument("<username>", "2 to 40 letters, digits, dots, dashes or underscores")
    .addOption(new Option("--role <role>", "what the person may do").choices([...ROLES]).makeOptionMandatory())
    .addHelpText("after", `${passwordHelp}\n\nExamples:\n  BATON_PASSWORD='...' baton user create mei --role admin\n  echo '...' | baton user create ren --role operator`)
    .action(async (username: string, options: { role: Role }) => {
      const { createUserAs, listUsers, newAccountSchema } = await import("../lib/auth/users");
      const { parseInput } = await import("../lib/core/parse-input");
      // A bad username is reported before anyone types a password.
      const named = parseInput(newAccountSchema.pick({ username: true, role: true }), { username, role: options.role }, "user");
      const password = await readPassword(source, named.username);
      const account = parseInput(newAccountSchema, { username: named.username, password, role: named.role }, "user");
      await prepareDatabase();
      const created = await createUserAs(ACTOR, account);
      console.log(`created ${created.username} (${created.role})`);
      const users = await listUsers();
      if (!users.some((someone) => someone.role === "admin" && !someone.disabled)) {
        console.error("note: Baton has no active admin yet; create one with `baton user create NAME --role admin`");
      }
    });

  user
    .command("password")
    .description("Set a new password for an account and end all its sessions.")
    .argument("<username>", "whose password")
    .addHelpText("after", `${passwordHelp}\n\nExample:\n  echo '...' | baton user password mei`)
    .action(async (username: string) => {
      const { passwordChangeSchema, setPassword } = await import("../lib/auth/users");
      const { parseInput } = await import("../lib/core/parse-input");
      const named = parseInput(passwordChangeSchema.pick({ username: true }), { username }, "password change");
      const password = await readPassword(source, named.username);
      await prepareDatabase();
      const { user: changed, sessionsEnded } = await setPassword(ACTOR, named.username, password);
      console.log(`password set for ${changed.username}; ${sessionsEnded} session(s) ended`);
      if (changed.disabled) console.error(`note: ${changed.username} is disabled; an admin can enable the account at /admin/users`);
    });

  user
    .command("list")
    .description("List accounts: username, role, created, disabled.")
    .action(async () => {
      const { listUsers } = await import("../lib/auth/users");
      await prepareDatabase();
      const users = await listUsers();
      if (!users.length) {
        console.log("no users; create the first admin with `baton user create NAME --role admin`");
        return;
      }
      const rows = [["username", "role", "created", "disabled"], ...users.map((u) => [u.username, u.role, u.created_at, u.disabled ? "yes" : "no"])];
      for (const line of pad(rows)) console.log(line);
    });
}
