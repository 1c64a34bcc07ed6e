import { json } from "@/lib/api/handler";
import { openApiDocument } from "@/lib/api/openapi";
import pkg from "@/package.json" with { type: "json" };

export const dynamic = "force-dynamic";

// Public on purpose: the API's description holds no data, and a tool reading
// it should not need a token first.
export async function GET(): Promise<Response> {
  return json(openApiDocument(pkg.version), 200, { "cache-control": "public, max-age=300" });
}
