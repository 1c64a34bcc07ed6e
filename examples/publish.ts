// A producer publishing through the typed client, as a separate program would:
//   HOOKLEDGER_URL=http://localhost:3000 HOOKLEDGER_TOKEN=… node bin/run-ts.mjs examples/publish.ts
// It imports the package export, not a path inside the repository; a service
// that installed the @hookledger/client tarball imports "@hookledger/client"
// instead, and the rest reads the same.
import { HookledgerApiError, HookledgerClient } from "hookledger/client";

const client = new HookledgerClient({ baseUrl: process.env.HOOKLEDGER_URL ?? "http://localhost:3000", token: process.env.HOOKLEDGER_TOKEN ?? "" });
const prefix = process.env.EXAMPLE_PREFIX ?? `example_${Date.now().toString(36)}`;

const graded = {
  id: `${prefix}_1`,
  type: "assignment.graded",
  data: { studentId: "stu_881", schoolId: "sch_lin_01", assignmentId: "asg_110", score: 93, maxScore: 100, gradedAt: "2026-09-14T15:02:11Z" },
  subject: { tenant: "lincoln", studentId: "stu_881" },
};
const one = await client.publish(graded);
console.log(`published ${one.eventId}: ${one.created ? "created" : "duplicate"}, ${one.deliveries.length} ${one.deliveries.length === 1 ? "delivery" : "deliveries"}`);

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

// The same id with other data: a 409, and nothing written. Any 4xx is a HookledgerApiError with the API's code;
// a 429 or 503 was already retried, and anything else (the network) is not a HookledgerApiError.
try {
  await client.publish({ ...graded, data: { ...graded.data, score: 94 } });
} catch (err) {
  if (!(err instanceof HookledgerApiError)) throw err;
  console.log(`refused ${err.status} ${err.code}: ${err.message}`);
}
