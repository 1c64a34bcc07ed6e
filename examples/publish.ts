// A producer publishing through the typed client, as a separate program would:
//   HOOKLEDGER_URL=http://localhost:3000 HOOKLEDGER_TOKEN=… node bin/run-ts.mjs examples/publish.ts
// It imports the package export, not a path inside the repository; a service
// that installed the @hookledger/client tarball imports "@hookledger/client"
// instead, and the rest reads the same.
import { HookledgerApiError, HookledgerClient } from "hookledger/client";

const client = new HookledgerClient({ baseUrl: process.env.HOOKLEDGER_URL ?? "http://localhost:3000", token: process.env.HOOKLEDGER_TOKEN ?? "" });
const prefix = process.env.EXAMPLE_PREFIX ?? `example_${Date.now().toString(36)}`;

const one = await client.publish({
  id: `${prefix}_1`,
  type: "assignment.graded",
  data: { studentId: "stu_881", schoolId: "sch_lin_01", assignmentId: "asg_110", score: 93, maxScore: 100, gradedAt: "2026-09-14T15:02:11Z" },
  subject: { tenant: "lincoln", studentId: "stu_881" },
});
console.log(`published ${one.eventId}: ${one.created ? "created" : "duplicate"}, ${one.deliveries.length} deliveries`);

const batch = await client.publishBatch([
  {
    id: `${prefix}_2`,
    type: "assignment.graded",
    data: { studentId: "stu_882", schoolId: "sch_lin_01", assignmentId: "asg_110", score: 71, maxScore: 100, gradedAt: "2026-09-14T15:04:40Z" },
    subject: { tenant: "lincoln", studentId: "stu_882" },
  },
  { id: `${prefix}_3`, type: "not a type", data: {} },
]);
for (const r of batch.results) console.log("error" in r ? `#${r.index} failed: ${r.error.code}` : `#${r.index} ${r.id}: ${r.status}`);

try {
  await client.subscriptions.get("sub_does_not_exist");
} catch (err) {
  if (!(err instanceof HookledgerApiError)) throw err;
  console.log(`error ${err.status} ${err.code}`);
}
