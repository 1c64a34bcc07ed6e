// Next.js calls register() once when a server process starts. The dashboard's
// sampler (DLQ depth history, per-minute attempt stats) runs here, in the
// dashboard process, so `hookledger start --workers 0` deployments still get
// it; lib/rollups/sampler.ts explains why several instances are safe.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  if (process.env.NEXT_PHASE === "phase-production-build") return;
  const { startSampler } = await import("./lib/rollups/sampler");
  startSampler();
}
