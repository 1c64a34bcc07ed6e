// The latency histogram's buckets live with the rollup that fills them
// (lib/ledger/read/latency.ts); the pages and the bench import them from here.
import "server-only";
export { LATENCY_BOUNDS_MS, LATENCY_BUCKETS, latencyBucket, quantileFromHistogram } from "../ledger/read/latency";
