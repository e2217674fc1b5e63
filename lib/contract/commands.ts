/** Turns the command shapes producers write into one display string. */

const SAFE_ARG = /^[\w@%+=:,./-]+$/;

export function joinArgv(argv: readonly string[]): string {
  return argv.map((arg) => (arg !== "" && SAFE_ARG.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`)).join(" ");
}

// The text form of a Python list of strings, e.g. "['pytest', '-x']", as one
// reference generator writes argv commands.
const PY_LIST = /^\[\s*((?:'[^']*'|"[^"]*")(?:\s*,\s*(?:'[^']*'|"[^"]*"))*)?\s*,?\s*\]$/;
const PY_ITEM = /'([^']*)'|"([^"]*)"/g;

export function parseTextArgv(text: string): string[] | null {
  const match = PY_LIST.exec(text.trim());
  if (!match) return null;
  return [...(match[1] ?? "").matchAll(PY_ITEM)].map((item) => item[1] ?? item[2] ?? "");
}

export function commandText(command: string | readonly string[]): string {
  if (Array.isArray(command)) return joinArgv(command);
  const text = command as string;
  const argv = parseTextArgv(text);
  return argv ? joinArgv(argv) : text;
}
