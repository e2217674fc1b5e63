/** The longest a request may wait (5 minutes). Its own module: `baton mcp` states it without loading the server's waiting read. */
export const MAX_WAIT_SECONDS = 300;
