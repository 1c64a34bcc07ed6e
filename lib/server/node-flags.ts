// Node's flags for the process that serves the dashboard and the API
// (server.ts, as `hookledger start` runs it; the bench starts it the same way).
//
// A larger young generation (V8's new space): a publish request's objects (the
// parsed events, their rows, the driver's parameters, the answer) live until
// its statement commits, tens of milliseconds later, so with Node's default
// semi-space of 16 MB most of them were copied into the old generation and
// collected there. With 64 MB they die young. Batches of 500 through
// server.ts (scratch runs taking turns, BENCHMARKS.md F9): 60-65 µs of
// server CPU per event against 72-91 µs.
export const SERVER_NODE_FLAGS = ["--max-semi-space-size=64"];
