#!/usr/bin/env node
// The hookledger CLI. TypeScript sources run through tsx, so there is no
// separate compile step between editing and running.
import { register } from "tsx/esm/api";
register();
await import("../lib/cli/main.ts");
