// What an endpoint has been answering, from its attempts: the last failure of
// each subscription (attempts_sub_failed: its failed attempts, newest first),
// the run of failures since its last success (attempts_sub_started:
// subscription_id, started_at DESC), and the failures grouped by answer.
import "server-only";
import { queryRows, sql, type LedgerDb, type Sql } from "./db";

export type RecentAnswers = {
  subscription_id: string;
  /** The newest failed attempt in the last LAST_ERROR_DAYS days (null: none). */
  started_at: Date | null;
  status_code: number | null;
  error_class: string | null;
  /** The error's message, or else the answer's first 120 characters: the one-line form. */
  message: string | null;
  /** The answer's stored excerpt, whole. */
  excerpt: string | null;
  /** The newest delivered attempt among the newest RUN_WINDOW. */
  last_ok_at: Date | null;
  /** The failed attempts after it (the newest ones, all failed): how many, and when the first was. */
  run_attempts: number;
  run_since: Date | null;
};

/** How far back the health list looks for a subscription's last error. */
const LAST_ERROR_DAYS = 30;
/** How many of a subscription's newest attempts the run of failures is counted in. */
const RUN_WINDOW = 500;

/**
 * Per subscription, within the last LAST_ERROR_DAYS days: the newest failure (with its whole excerpt), the newest
 * success among the newest RUN_WINDOW attempts, and the run of failures since that success. Each costs what the
 * answer holds, not the subscription's traffic: the failure is one probe of attempts_sub_failed (migration 0053),
 * and the success and the run are walks of the newest attempts that stop at the first success, so a subscription
 * whose deliveries succeed reads a row or two (a walk of its newest RUN_WINDOW attempts on each poll read 500 rows a
 * subscription: 97 ms for 200 against 6.7 ms, BENCHMARKS.md F3). The window is what keeps this one query per page:
 * attempts are partitioned by month, and without a bound on created_at every subscription's lookup opens every month
 * (9x slower at 200 subscriptions).
 */
export async function findRecentAnswers(db: LedgerDb, ids: string[], now = new Date()): Promise<RecentAnswers[]> {
  const since = new Date(now.getTime() - LAST_ERROR_DAYS * 86_400_000);
  return queryRows<RecentAnswers>(
    db,
    sql`SELECT s.id AS subscription_id, e.started_at, e.status_code, e.error_class, e.message, e.excerpt,
               ok.at AS last_ok_at, run.n AS run_attempts, run.since AS run_since
          FROM unnest(${ids}::text[]) AS s(id)
          LEFT JOIN LATERAL (
            SELECT r.started_at AS at
              FROM (SELECT started_at, outcome FROM attempts a
                     WHERE a.subscription_id = s.id AND a.created_at >= ${since}::timestamptz
                     ORDER BY started_at DESC LIMIT ${RUN_WINDOW}) r
             WHERE r.outcome = 'delivered' LIMIT 1
          ) ok ON true
         CROSS JOIN LATERAL (
            SELECT count(*)::int AS n, min(f.started_at) AS since
              FROM (SELECT started_at FROM attempts a
                     WHERE a.subscription_id = s.id AND a.created_at >= ${since}::timestamptz AND a.outcome <> 'delivered'
                       AND a.started_at > coalesce(ok.at, '-infinity')
                     ORDER BY started_at DESC LIMIT ${RUN_WINDOW}) f
          ) run
          LEFT JOIN LATERAL (
            SELECT started_at, status_code, error_class, coalesce(error_message, left(response_excerpt, 120)) AS message,
                   response_excerpt AS excerpt
              FROM attempts a
             WHERE a.subscription_id = s.id AND a.created_at >= ${since}::timestamptz AND a.outcome <> 'delivered'
             ORDER BY started_at DESC LIMIT 1
          ) e ON true`,
  );
}

/** `dead_lettered`: how many of the group's attempts were a delivery's last, dead-lettering it (a retried 429 is none). */
export type AnswerRow = {
  status_code: number | null;
  error_class: string | null;
  signature: string;
  count: number;
  dead_lettered: number;
  first_at: Date;
  last_at: Date;
};

/**
 * What folds to "#" when answers are grouped: what varies from one answer to the next, so "missing field term_id for
 * stu_map1075" and "… stu_map2231" are one answer while the words that tell answers apart stay. Folded: UUIDs; a
 * prefixed id with a digit (`stu_map1075`; not `term_id`, nor `http_429`, too short to be an id); a run of 8 or more
 * hex digits with a digit in it (a request id, a hash; not "defaced"); a number of 4 or more digits that is not part of
 * a date or a time and is not followed by a unit ("row 1042", "order 1234567"); a time of day. Kept: dates
 * ("decommissioned on 2026-06-30"), durations ("No answer within 10000 ms"), short numbers, words. PostgreSQL's
 * regular expressions: \m and \M a word's start and end, (?=…) (?!…) (?<!…) look ahead and behind. Applied one after
 * the other, in this order: PostgreSQL runs each alone about four times faster than their alternation.
 */
const ID_PATTERNS = [
  String.raw`[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}`,
  String.raw`\m[A-Za-z]{2,10}_(?=[A-Za-z0-9_]{4,})[A-Za-z0-9_]*[0-9][A-Za-z0-9_]*`,
  String.raw`\m(?=[0-9A-Fa-f]{8,}\M)[0-9A-Fa-f]*[0-9][0-9A-Fa-f]*\M`,
  String.raw`(?<![-/.:])\m[0-9]{4,}\M(?![-/.:][0-9])(?!\s?(ms|s|secs?|seconds?|mins?|minutes?|h|hours?|days?|bytes?|[KkMG]i?B)\M)`,
  String.raw`\m[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?`,
];

/** `text` with its ids folded to # (ID_PATTERNS) and its whitespace to single spaces, trimmed. */
function folded(text: Sql): Sql {
  const ids = ID_PATTERNS.reduce<Sql>((acc, pattern) => sql`regexp_replace(${acc}, ${pattern}, '#', 'g')`, text);
  return sql`btrim(regexp_replace(${ids}, '\\s+', ' ', 'g'))`;
}

/**
 * How much of each answer decides its group. The regular expressions cost about a microsecond a character, and an
 * endpoint chooses what it answers: folding every stored excerpt whole (4 KB each, `window` of them) took seconds on
 * each poll of the subscription's page for an ordinary 4 KB HTML error page, and past the statement timeout for one
 * written to match at every step. Answers that differ only after this much are one group, shown by its newest.
 */
const GROUP_BY_CHARS = 256;

/**
 * The failed attempts among a subscription's newest `window`, grouped by status, error class and signature (the
 * beginning of the answer, GROUP_BY_CHARS, with its whitespace folded and its ids folded to # by ID_PATTERNS, so
 * variants group together), biggest first; each group's signature is its newest answer whole, as stored, folded the
 * same way; and how many attempts were examined.
 */
export async function findAnswerGroups(db: LedgerDb, subscriptionId: string, window: number): Promise<{ groups: AnswerRow[]; examined: number }> {
  const rows = await queryRows<AnswerRow & { examined: number }>(
    db,
    sql`WITH recent AS MATERIALIZED (
          SELECT started_at, outcome, status_code, error_class, coalesce(response_excerpt, error_message, '') AS answer
            FROM attempts WHERE subscription_id = ${subscriptionId} ORDER BY started_at DESC LIMIT ${window}::int
        ), failed AS MATERIALIZED (
          SELECT started_at, outcome, status_code, error_class, answer, ${folded(sql`left(answer, ${GROUP_BY_CHARS}::int)`)} AS key
            FROM recent WHERE outcome <> 'delivered'
        ), g AS (
          SELECT status_code, error_class, key, count(*)::int AS count, count(*) FILTER (WHERE outcome = 'dead_letter')::int AS dead_lettered,
                 min(started_at) AS first_at, max(started_at) AS last_at
            FROM failed GROUP BY 1, 2, 3 ORDER BY count DESC, last_at DESC LIMIT 20
        )
        SELECT g.status_code, g.error_class, ${folded(sql`newest.answer`)} AS signature, g.count, g.dead_lettered, g.first_at, g.last_at,
               (SELECT count(*)::int FROM recent) AS examined
          FROM g CROSS JOIN LATERAL (
                 SELECT f.answer FROM failed f
                  WHERE f.status_code IS NOT DISTINCT FROM g.status_code AND f.error_class IS NOT DISTINCT FROM g.error_class AND f.key = g.key
                  ORDER BY f.started_at DESC LIMIT 1) newest
         ORDER BY g.count DESC, g.last_at DESC`,
  );
  if (rows[0]) return { groups: rows, examined: rows[0].examined };
  const [n] = await queryRows<{ n: number }>(
    db,
    sql`SELECT count(*)::int AS n FROM (SELECT 1 FROM attempts WHERE subscription_id = ${subscriptionId} LIMIT ${window}::int) x`,
  );
  return { groups: [], examined: n.n };
}
