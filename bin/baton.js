#!/usr/bin/env node
// The `baton` command: a thin shell over lib/, run through tsx so lib/ stays TypeScript.
import "./server-only.js";
import { register } from "tsx/esm/api";

register();
const { main } = await import("../cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
