#!/usr/bin/env node
// Runs a TypeScript entry point (bench, chaos) with the project's tsx loader.
import { register as registerHook } from "node:module";
import { register } from "tsx/esm/api";
import path from "node:path";
import { pathToFileURL } from "node:url";
register();
// After tsx, so that this hook is asked first.
registerHook("./server-only-hook.mjs", import.meta.url);
const [entry, ...rest] = process.argv.slice(2);
if (!entry) {
  console.error("usage: run-ts.mjs <file.ts> [args…]");
  process.exit(2);
}
process.argv = [process.argv[0], entry, ...rest];
await import(pathToFileURL(path.resolve(entry)).href);
