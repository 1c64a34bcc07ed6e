// Where the two cores went during a measurement: CPU seconds of the worker
// processes, the receiver, this bench process and our own PostgreSQL (the
// postmaster and its backends), and the whole machine's busy time from
// /proc/stat (which includes anything else running on the box).
import fs from "node:fs";

const HZ = 100; // USER_HZ on Linux

function procCpu(pid: number): { cpu: number; ppid: number; reaped: number } | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const rest = s.slice(s.lastIndexOf(")") + 2).split(" ");
    // after "pid (comm) ": state ppid ... utime(14th field overall = rest[11]) stime(rest[12]) cutime cstime (children already reaped)
    return { ppid: Number(rest[1]), cpu: (Number(rest[11]) + Number(rest[12])) / HZ, reaped: (Number(rest[13]) + Number(rest[14])) / HZ };
  } catch {
    return null;
  }
}

/** What a PostgreSQL child process is, from its title ("postgres: autovacuum worker …", "postgres: user db 127.0.0.1(…) idle"). */
function pgRole(pid: number): string {
  let title = "";
  try {
    title = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    return "gone";
  }
  const m = /postgres: (autovacuum|walwriter|checkpointer|background writer|walsummarizer|logical replication|io worker)/.exec(title);
  return m ? m[1].replace(" ", "_") : "backends";
}

function allPids(): number[] {
  return fs
    .readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

function machineBusy(): { busy: number; total: number } {
  const line = fs.readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = line[3] + (line[4] ?? 0);
  const total = line.reduce((a, b) => a + b, 0);
  return { busy: (total - idle) / HZ, total: total / HZ };
}

export type CpuGroups = Record<string, number[] | (() => number[])>;

/** Snapshot now; call the returned function at the end for the CPU seconds used in between, per group. */
export function cpuMeter(groups: CpuGroups, postmasterPid: number | null) {
  const resolve = () => {
    const out: Record<string, number[]> = {};
    for (const [k, v] of Object.entries(groups)) out[k] = typeof v === "function" ? v() : v;
    if (postmasterPid) {
      const pids = allPids();
      out.postgres = [postmasterPid, ...pids.filter((p) => procCpu(p)?.ppid === postmasterPid)];
    }
    return out;
  };
  const read = (g: Record<string, number[]>) => {
    const r: Record<string, Map<number, number>> = {};
    for (const [k, pids] of Object.entries(g)) r[k] = new Map(pids.map((p) => [p, procCpu(p)?.cpu ?? 0]));
    return r;
  };
  const t0 = performance.now();
  const g0 = resolve();
  const c0 = read(g0);
  const m0 = machineBusy();
  const reaped0 = postmasterPid ? (procCpu(postmasterPid)?.reaped ?? 0) : 0;
  return () => {
    const wall = (performance.now() - t0) / 1000;
    const g1 = resolve();
    const c1 = read(g1);
    const m1 = machineBusy();
    const cores: Record<string, number> = {};
    for (const k of Object.keys(g1)) {
      let used = 0;
      for (const [pid, cpu] of c1[k]) used += cpu - (c0[k]?.get(pid) ?? 0); // backends born during the window count from 0
      cores[k] = Math.round((used / wall) * 100) / 100;
    }
    // Postgres by role: client backends, autovacuum, WAL writer, checkpointer…; "reaped" is the CPU
    // of children that exited inside the window (autovacuum workers mostly), which the postmaster's
    // cutime/cstime collects.
    let pgRoles: Record<string, number> | undefined;
    if (postmasterPid && g1.postgres) {
      const byRole: Record<string, number> = {};
      for (const [pid, cpu] of c1.postgres) {
        if (pid === postmasterPid) continue;
        const role = pgRole(pid);
        byRole[role] = (byRole[role] ?? 0) + (cpu - (c0.postgres?.get(pid) ?? 0)) / wall;
      }
      const reaped = ((procCpu(postmasterPid)?.reaped ?? 0) - reaped0) / wall;
      if (reaped > 0) byRole.reaped = reaped;
      cores.postgres = Math.round((cores.postgres + reaped) * 100) / 100;
      pgRoles = Object.fromEntries(
        Object.entries(byRole)
          .filter(([, v]) => v >= 0.005)
          .map(([k, v]) => [k, Math.round(v * 100) / 100]),
      );
    }
    const machine = Math.round(((m1.busy - m0.busy) / wall) * 100) / 100;
    const ours = Object.values(cores).reduce((a, b) => a + b, 0);
    return {
      wallSeconds: Math.round(wall * 100) / 100,
      coresUsed: cores,
      machineCoresBusy: machine,
      otherCoresBusy: Math.round(Math.max(0, machine - ours) * 100) / 100,
      ...(pgRoles ? { postgresByRole: pgRoles } : {}),
    };
  };
}
