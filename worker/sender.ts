// The sender lives in lib/net/sender.ts since the dashboard's test send uses it
// too (the dashboard may not import the worker); the worker's modules keep
// importing it from here.
export * from "../lib/net/sender";
