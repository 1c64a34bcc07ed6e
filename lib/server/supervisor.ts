// A process `hookledger start` runs (the dashboard, each worker) stops itself
// when that start is gone. Killed with SIGKILL (or the OOM killer), start
// cannot stop its children, and they went on without it: a dashboard holding
// the port the next start needs, workers nobody watches. The child is
// reparented then, so its parent pid changes; it then stops as SIGTERM stops
// it (results written, leases released).

/** How often the parent pid is looked at: a system call, cheap. */
const CHECK_MS = 1_000;

/**
 * Watches for the end of the `hookledger start` whose pid is in
 * HOOKLEDGER_SUPERVISOR_PID (start sets it for its children only). Does
 * nothing for a process started any other way, or whose parent is another
 * process (a worker run by a shell that exits must keep running).
 */
export function stopWhenSupervisorGone(env: NodeJS.ProcessEnv = process.env, checkMs = CHECK_MS): void {
  const pid = Number(env.HOOKLEDGER_SUPERVISOR_PID);
  if (!Number.isInteger(pid) || pid <= 0 || process.ppid !== pid) return;
  const timer = setInterval(() => {
    if (process.ppid === pid) return;
    clearInterval(timer);
    console.error(`hookledger start (pid ${pid}) is gone; stopping this process too.`);
    process.kill(process.pid, "SIGTERM");
  }, checkMs);
  timer.unref();
}
