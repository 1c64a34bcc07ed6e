// A catalogued type's summary fields (JSON Pointers into an event's data, RFC 6901) read out of one event's data, as
// the lookup cards show them: "student id stu_881". Pure and client-safe.

/** The value at `pointer` in `data`, or undefined when there is none. */
function atPointer(data: unknown, pointer: string): unknown {
  if (pointer === "") return data;
  let at: unknown = data;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (at === null || typeof at !== "object") return undefined;
    if (Array.isArray(at)) at = /^\d+$/.test(key) ? at[Number(key)] : undefined;
    else at = Object.prototype.hasOwnProperty.call(at, key) ? (at as Record<string, unknown>)[key] : undefined;
  }
  return at;
}

/** How much of one value a card shows. */
const MAX_VALUE_CHARS = 60;

/** "/student_id" → "student id", "/grade/letterGrade" → "letter grade": the pointer's last segment in words. */
function labelOf(pointer: string): string {
  const last = pointer.split("/").pop() ?? pointer;
  return last
    .replace(/~1/g, "/")
    .replace(/~0/g, "~")
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/_/g, " ")
    .toLowerCase();
}

/** Each summary field that `data` holds, as [label, value] in the catalog's order; absent ones are left out. */
export function summaryValues(data: unknown, pointers: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (const p of pointers) {
    const v = atPointer(data, p);
    if (v === undefined || v === null) continue;
    const text = typeof v === "string" ? v : JSON.stringify(v);
    out.push([labelOf(p), text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1)}…` : text]);
  }
  return out;
}
