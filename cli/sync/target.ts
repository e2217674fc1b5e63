import "server-only";

/**
 * Where the CLI's HTTP clients send: its own module, free of the packet code, so that
 * commands which only read (`baton pull`, `baton wait`, `baton mcp`) start without loading it.
 */
export interface PushTarget {
  url: string;
  token: string;
  /** How requests are sent; the global fetch when absent (the MCP route answers in-process: app/api/v1/mcp/route.ts). */
  fetch?: typeof fetch;
}

export function pushTargetFromEnv(env: NodeJS.ProcessEnv = process.env): PushTarget {
  const url = (env.BATON_URL ?? "http://localhost:3000").replace(/\/+$/, "");
  const token = env.BATON_TOKEN ?? "";
  if (!token) throw new Error("Set BATON_TOKEN to an API token with the packets:write scope (`baton token create`).");
  return { url, token };
}
