// `npm run client:types`: writes client/src/openapi.ts, the types of the
// @hookledger/client package, from the OpenAPI document GET /api/v1/openapi.json
// serves. The document is built here by the same function the route calls, so
// no server (and no database) is needed; openapi-typescript turns it into
// types. The package itself never imports server code: these generated types
// are all it knows of the API. test/api/client-package.test.ts runs this with
// --out and fails when the committed file differs.
//   node bin/run-ts.mjs scripts/client-types.ts [--out FILE]
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from "openapi-typescript";
import { openApiDocument } from "../lib/api/openapi";
import pkg from "../package.json" with { type: "json" };

export const CLIENT_TYPES_FILE = "client/src/openapi.ts";

/** The generated module's text. */
export async function clientTypes(): Promise<string> {
  const ast = await openapiTS(openApiDocument(pkg.version) as unknown as OpenAPI3, { silent: true });
  return `${COMMENT_HEADER.replace(" */", " * Regenerate with `npm run client:types` (scripts/client-types.ts).\n */")}${astToString(ast)}`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const i = process.argv.indexOf("--out");
  const out = i > 0 ? process.argv[i + 1] : CLIENT_TYPES_FILE;
  if (!out) {
    console.error("usage: client-types.ts [--out FILE]");
    process.exit(2);
  }
  fs.writeFileSync(out, await clientTypes());
  console.log(`wrote ${out}`);
}
