// A JSON Schema read as the field table a district reads on the catalog page: each property's name (nested objects
// as dotted names, array items as name[]), its type, whether it is required and its description. Only the common
// shapes are walked (properties, items, type, enum, format); the page shows the raw schema beside it for the rest.

export type SchemaField = { name: string; type: string; required: boolean; description: string | null };

type Node = {
  type?: string | string[];
  properties?: Record<string, Node>;
  required?: string[];
  items?: Node;
  enum?: unknown[];
  const?: unknown;
  format?: string;
  description?: string;
  $ref?: string;
  anyOf?: Node[];
  oneOf?: Node[];
};

/** How deep nested objects are listed; deeper structure is in the raw schema. */
const MAX_DEPTH = 4;

function typeOf(n: Node): string {
  if (n.enum) return `one of ${n.enum.map((v) => JSON.stringify(v)).join(", ")}`;
  if (n.const !== undefined) return `exactly ${JSON.stringify(n.const)}`;
  if (n.$ref) return `see ${n.$ref}`;
  const alts = n.anyOf ?? n.oneOf;
  if (alts) return alts.map(typeOf).join(" or ");
  const t = Array.isArray(n.type) ? n.type.join(" or ") : (n.type ?? (n.properties ? "object" : "any"));
  if (t === "array" && n.items) return `array of ${typeOf(n.items)}`;
  return n.format ? `${t} (${n.format})` : t;
}

function walk(node: Node, prefix: string, depth: number, out: SchemaField[]): void {
  if (!node || typeof node !== "object" || !node.properties || depth > MAX_DEPTH) return;
  const requiredList = Array.isArray(node.required) ? node.required : [];
  const required = new Set(requiredList);
  // Stored as jsonb, a schema's properties come back in jsonb's key order, not the author's: the required fields
  // first in the order the schema lists them (an array keeps it), then the optional ones by name.
  const keys = Object.keys(node.properties);
  const ordered = [...requiredList.filter((k) => keys.includes(k)), ...keys.filter((k) => !required.has(k)).sort()];
  for (const key of ordered) {
    const child = node.properties[key];
    if (!child || typeof child !== "object") continue;
    const name = prefix ? `${prefix}.${key}` : key;
    out.push({ name, type: typeOf(child), required: required.has(key), description: typeof child.description === "string" ? child.description : null });
    walk(child, name, depth + 1, out);
    if (child.items && typeof child.items === "object") walk(child.items, `${name}[]`, depth + 1, out);
  }
}

/** The schema's fields, required ones first; [] for a schema without properties. */
export function schemaFields(schema: unknown): SchemaField[] {
  const out: SchemaField[] = [];
  walk(schema as Node, "", 0, out);
  return out;
}
