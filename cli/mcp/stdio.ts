import "server-only";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { pullTarget, type ServerOptions } from "../sync/pull";
import { createBatonMcpServer } from "./tools";

/**
 * `baton mcp`: Baton's MCP tools over stdio. stdout carries only the protocol, so
 * anything else printed (ours or a library's console.log) goes to stderr.
 */
export async function serveMcpOverStdio(options: ServerOptions): Promise<void> {
  console.log = console.error;
  console.info = console.error;
  const target = pullTarget(options);
  const server = createBatonMcpServer(target, (line) => console.error(`baton mcp: ${line}`));
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    process.stdin.once("end", resolve);
  });
  await server.connect(transport);
  console.error(`baton mcp: serving over stdio for ${target.url}`);
  await closed;
  await server.close();
}
