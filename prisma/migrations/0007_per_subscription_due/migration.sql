-- The claim walks subscriptions and reads each one's due rows (worker/sql.ts).
-- With the global deliveries_due index present, the planner used it for every
-- subscription's branch and filtered by subscription, walking past a down
-- district's backlog on every claim (BENCHMARKS.md F2: fairness 62.5% kept).
-- deliveries_sub_due (subscription_id, next_attempt_at), from 0002, serves
-- the claim, the dashboard's queue counts and /metrics' queue head.
DROP INDEX IF EXISTS deliveries_due;
