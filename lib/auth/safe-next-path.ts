const PROBE_ORIGIN = "http://baton.invalid";

/**
 * Where to go after sign-in: only a path of this site. Browsers strip tabs and
 * newlines and read `\` as `/` in URLs ("/\t/evil.example" is "//evil.example"),
 * so the path is resolved the way a browser would and must stay on this origin.
 */
export function safeNextPath(next: unknown): string {
  if (typeof next !== "string" || !next.startsWith("/") || /[\u0000-\u001f\u007f\\]/.test(next)) return "/";
  let resolved: URL;
  try {
    resolved = new URL(next, PROBE_ORIGIN);
  } catch {
    return "/";
  }
  if (resolved.origin !== PROBE_ORIGIN) return "/";
  const path = `${resolved.pathname}${resolved.search}${resolved.hash}`;
  return path.startsWith("//") ? "/" : path;
}
