// How many rows a statement read from a table, from its EXPLAIN (ANALYZE, FORMAT JSON) plan: the tests that hold a
// poll or a loop to what is due ("costs what it shows, not what exists") count those, which neither the machine's
// speed nor the planner's choice between equivalent index paths moves.

export type PlanNode = { "Relation Name"?: string; "Actual Rows": number; "Actual Loops": number; "Rows Removed by Filter"?: number; Plans?: PlanNode[] };

/** Rows the plan's scans of `table` (or of every table `table` matches) returned plus those they filtered out, over all loops. */
export function rowsRead(n: PlanNode, table: string | ((relation: string) => boolean)): number {
  const relation = n["Relation Name"];
  const ours = relation !== undefined && (typeof table === "string" ? relation === table : table(relation));
  const own = ours ? (n["Actual Rows"] + (n["Rows Removed by Filter"] ?? 0)) * n["Actual Loops"] : 0;
  return own + (n.Plans ?? []).reduce((s, c) => s + rowsRead(c, table), 0);
}
