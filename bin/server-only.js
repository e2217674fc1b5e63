// The CLI and the Playwright processes run lib/ outside Next, as servers: `server-only`
// resolves with the react-server condition, as in Next's server layer, and nothing else
// changes (docs/decisions/039-server-only-modules.md). Import this before any lib/ module.
import { register } from "node:module";

register("./server-only-hooks.js", import.meta.url);
