// The chaos receivers' own process (see ReceiverHost in ./receivers.ts): it
// starts one ChaosReceiver per spec and answers the driver's questions over IPC.
import { ChaosReceiver, type ReceiverSpec } from "./receivers";

const receivers: ChaosReceiver[] = [];
const send = (m: unknown) => process.send?.(m);

process.on("message", async (m: { type: string; id?: number; specs?: ReceiverSpec[] }) => {
  if (m.type === "start") {
    for (const s of m.specs!) receivers.push(await new ChaosReceiver(s).start());
    send({ type: "started", urls: receivers.map((r) => r.url) });
  } else if (m.type === "counts") {
    send({ type: "counts", id: m.id, counts: receivers.map((r) => r.requestCount) });
  } else if (m.type === "snapshot") {
    send({
      type: "snapshot",
      id: m.id,
      records: receivers.map((r) => ({
        behavior: r.behavior,
        subscriptionId: r.subscriptionId,
        requests: [...r.requests],
        applied: [...r.applied],
        suppressed: r.suppressed,
        arrivals: r.arrivals,
        problems: r.problems,
        answered: r.answered,
        requestCount: r.requestCount,
        earlyAfter429: r.earlyAfter429,
      })),
    });
  }
});
// The driver gone (IPC closed) means the run is over.
process.on("disconnect", () => process.exit(0));
