#!/usr/bin/env node
// The hookledger CLI. TypeScript sources run through tsx, so there is no
// separate compile step between editing and running.
import { register as registerHook } from "node:module";
import { register } from "tsx/esm/api";
register();
// After tsx, so that this hook is asked first.
registerHook("./server-only-hook.mjs", import.meta.url);
await import("../cli/main.ts");
