// The retention runs a person started through the API in this process, so
// a server that is stopping can stop them between batches and let them record
// that (lib/retention/run-retention.ts: a stopped run is recorded as failed, with
// why and what it removed) instead of leaving a record that says running.
// Kept on globalThis: the routes and the server's own entry (server.ts) load
// their own copies of this module. No imports: server.ts loads it on its own.

type Running = { abort: AbortController; done: Promise<unknown> };
const registry = ((globalThis as { __hookledgerRetentionRuns?: Set<Running> }).__hookledgerRetentionRuns ??= new Set<Running>());

/** Registers a run until `done` settles; `abort` stops it between batches. */
export function trackRun(abort: AbortController, done: Promise<unknown>): void {
  const entry: Running = { abort, done: done.catch(() => {}) };
  registry.add(entry);
  void entry.done.finally(() => registry.delete(entry));
}

/** Stops this process's tracked runs and waits, at most `waitMs`, for them to record it. */
export async function stopRetentionRuns(waitMs = 1_000): Promise<void> {
  const running = [...registry];
  if (running.length === 0) return;
  for (const r of running) r.abort.abort();
  await Promise.race([Promise.all(running.map((r) => r.done)), new Promise((r) => setTimeout(r, waitMs).unref())]);
}
