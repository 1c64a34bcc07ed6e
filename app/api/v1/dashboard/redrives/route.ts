import { apiRoute, json, parseQuery } from "@/lib/api/handler";
import { getPrisma } from "@/lib/db/prisma";
import { findNamedRedriveBatchPage } from "@/lib/redrive/named-batches";
import { ZListRedrives } from "@/lib/redrive/redrive-input";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

/** The Redrives page's poll: one page of batches as GET /api/v1/redrives answers it, with `names`, their subscriptions' names by id. */
export const GET = apiRoute("dlq.read", async ({ req, principal }) =>
  json(await findNamedRedriveBatchPage(getPrisma(), parseQuery(req, ZListRedrives), scopeOf(principal))),
);
