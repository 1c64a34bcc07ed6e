// The admin page's Retention section: the policy (the environment's days and
// each tenant's override), the oldest data the ledger still holds, the last
// runs and what each removed, and the ledger tables' sizes (with monthly
// partitions, each partition's range and size).
import type { RetentionOverview } from "@/lib/retention/run-retention";
import { Card } from "@/components/ui/kit";
import { Time } from "@/components/ui/time";
import { actorInWords, num, noun } from "@/lib/words";

const mb = (bytes: number) => (bytes >= 1024 * 1024 * 1024 ? `${(bytes / 1024 ** 3).toFixed(1)} GB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`);
/** A row estimate; "not yet counted" until the table has been analysed (autovacuum does it). */
const est = (x: number | null) => (x === null ? "not yet counted" : `~${num(x)}`);
const payload = (d: number | null) => (d === null ? "kept with the delivery" : `expunged after ${num(d)} days`);
const th = "whitespace-nowrap py-2 pr-4 font-medium";
const td = "py-2 pr-4 align-top";

function PolicyCard({ policy }: { policy: RetentionOverview["policy"] }) {
  return (
    <Card title="Policy" id="retention-policy">
      <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm">
        <dt className="text-slate-600">Finished deliveries</dt>
        <dd>
          kept <strong>{num(policy.retentionDays)} days</strong> <span className="break-all text-slate-500">(HOOKLEDGER_RETENTION_DAYS)</span>
        </dd>
        <dt className="text-slate-600">Payloads</dt>
        <dd>
          {payload(policy.payloadRetentionDays)} <span className="break-all text-slate-500">(HOOKLEDGER_PAYLOAD_RETENTION_DAYS)</span>
        </dd>
      </dl>
      {policy.overrides.length > 0 ? (
        <div className="mt-3 overflow-x-auto">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">Tenants&apos; overrides</caption>
            <thead className="text-slate-500">
              <tr>
                <th className={th}>Tenant</th>
                <th className={th}>Deliveries</th>
                <th className={th}>Payloads</th>
              </tr>
            </thead>
            <tbody>
              {policy.overrides.map((o) => (
                <tr key={o.tenant} className="border-t border-slate-200">
                  <td className={td}>{o.tenant}</td>
                  <td className={td}>{num(o.retentionDays)} days</td>
                  <td className={td}>{payload(o.payloadRetentionDays)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p className="mt-3 text-sm text-slate-600">No tenant overrides the policy.</p>
      )}
    </Card>
  );
}

function RunsCard({ runs }: { runs: RetentionOverview["runs"] }) {
  const last = runs[0];
  return (
    <Card title="Last run" id="retention-last-run">
      {last ? (
        <p className="text-sm">
          <Time iso={last.startedAt} /> · {last.trigger === "schedule" ? "the daily run" : `run by ${actorInWords(last.actor)}`} · {last.status}
          {last.error && <span className="text-red-700"> ({last.error})</span>}: removed{last.status === "running" ? " so far" : ""}{" "}
          <strong>{num(last.deliveries)}</strong> {noun(last.deliveries, "delivery", "deliveries")}, <strong>{num(last.attempts)}</strong>{" "}
          {noun(last.attempts, "attempt", "attempts")} and <strong>{num(last.events)}</strong> {noun(last.events, "event", "events")}
          {last.partitions ? `, ${num(last.partitions)} whole ${noun(last.partitions, "month", "months")}` : ""}; expunged <strong>{num(last.expunged)}</strong>{" "}
          {noun(last.expunged, "payload", "payloads")}.
        </p>
      ) : (
        <p className="text-sm text-slate-600">No run yet: the worker runs it once a day.</p>
      )}
      {runs.length > 1 && (
        <div className="mt-3 overflow-x-auto">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">Earlier runs</caption>
            <thead className="text-slate-500">
              <tr>
                <th className={th}>Started</th>
                <th className={th}>By</th>
                <th className={th}>Status</th>
                <th className={`${th} text-right`}>Deliveries</th>
                <th className={`${th} text-right`}>Attempts</th>
                <th className={`${th} text-right`}>Events</th>
                <th className={`${th} text-right`}>Expunged</th>
              </tr>
            </thead>
            <tbody>
              {runs.slice(1).map((r) => (
                <tr key={r.id} className="border-t border-slate-200">
                  <td className={`${td} whitespace-nowrap`}>
                    <Time iso={r.startedAt} relative={false} />
                  </td>
                  <td className={td}>{r.trigger === "schedule" ? "daily run" : actorInWords(r.actor)}</td>
                  <td className={td}>{r.status}</td>
                  <td className={`${td} text-right tabular-nums`}>{num(r.deliveries)}</td>
                  <td className={`${td} text-right tabular-nums`}>{num(r.attempts)}</td>
                  <td className={`${td} text-right tabular-nums`}>{num(r.events)}</td>
                  <td className={`${td} text-right tabular-nums`}>{num(r.expunged)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}

export function RetentionSection({ overview }: { overview: RetentionOverview }) {
  const { policy, oldest, runs, tables, partitions } = overview;
  return (
    <section aria-labelledby="retention" className="space-y-6">
      <div>
        <h1 id="retention" className="text-2xl font-semibold">
          Retention
        </h1>
        <p className="mt-1 max-w-3xl text-sm text-slate-600">
          Delivered and resolved deliveries, their attempts and the events nothing else needs are removed once older than the policy, by a daily run in the worker (or{" "}
          <code className="rounded bg-slate-100 px-1">hookledger retention run</code>). Pending, scheduled, in-flight and dead-lettered deliveries and their events are
          never removed.
        </p>
      </div>

      <div className="grid grid-cols-1 gap-6 lg:grid-cols-2">
        <PolicyCard policy={policy} />

        <Card title="Oldest data kept" id="retention-oldest">
          <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm">
            <dt className="text-slate-600">Event</dt>
            <dd>{oldest.event ? <Time iso={oldest.event} /> : "none"}</dd>
            <dt className="text-slate-600">Finished delivery</dt>
            <dd>{oldest.finishedDelivery ? <Time iso={oldest.finishedDelivery} /> : "none"}</dd>
            <dt className="text-slate-600">Attempt</dt>
            <dd>{oldest.attempt ? <Time iso={oldest.attempt} /> : "none"}</dd>
          </dl>
          <p className="mt-3 text-sm text-slate-600">Whatever is still needed stays however old: a dead letter, a delivery still due, and their events and attempts.</p>
        </Card>
      </div>

      <RunsCard runs={runs} />

      <Card title="Tables" id="retention-tables">
        <div className="overflow-x-auto">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">The ledger tables and their sizes</caption>
            <thead className="text-slate-500">
              <tr>
                <th className={th}>Table</th>
                <th className={`${th} text-right`}>Rows (estimate)</th>
                <th className={`${th} text-right`}>Size</th>
              </tr>
            </thead>
            <tbody>
              {tables.map((t) => (
                <tr key={t.name} className="border-t border-slate-200">
                  <td className={td}>{t.name}</td>
                  <td className={`${td} text-right tabular-nums`}>{est(t.rows)}</td>
                  <td className={`${td} text-right tabular-nums`}>{mb(t.bytes)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Card>

      {partitions.length > 0 && (
        <Card title="Partitions" id="retention-partitions">
          <p className="mb-2 text-sm text-slate-600">
            Events, deliveries and attempts by month (UTC). A month that ended before the retention cutoff is removed whole by the run, the rows still needed (a dead
            letter’s, say) moved into a fresh month table first.
          </p>
          <div className="overflow-x-auto">
            <table className="w-full text-left text-sm">
              <caption className="sr-only">The month partitions of events, deliveries and attempts, with their sizes</caption>
              <thead className="text-slate-500">
                <tr>
                  <th className={th}>Partition</th>
                  <th className={th}>Month</th>
                  <th className={`${th} text-right`}>Rows (estimate)</th>
                  <th className={`${th} text-right`}>Size</th>
                </tr>
              </thead>
              <tbody>
                {partitions.map((p) => (
                  <tr key={p.name} className="border-t border-slate-200">
                    <td className={td}>{p.name}</td>
                    <td className={`${td} whitespace-nowrap`}>{p.from ? p.from.slice(0, 7) : "default"}</td>
                    <td className={`${td} text-right tabular-nums`}>{est(p.rows)}</td>
                    <td className={`${td} text-right tabular-nums`}>{mb(p.bytes)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </Card>
      )}
    </section>
  );
}
