// The Redrives ("Sent again") page's list: a page of batches with the names of the subscriptions their filters
// name by id, for the server's first render and for the client's polls alike, so a batch started while the list is
// open reads by its subscription's name at once rather than by its id until a reload.
import "server-only";
import type { PrismaClient } from "../db/prisma";
import { listRedriveBatchPage, type RedriveBatchPage } from "./redrive-batches";
import type { TListRedrives } from "./redrive-input";
import { findSubscriptionNames } from "../subscriptions/manage-subscriptions";
import { GLOBAL_SCOPE, type Scope } from "../tenants/scope";

export type NamedRedriveBatchPage = RedriveBatchPage & {
  /** The batches' subscriptions by id, those the viewer may see (a district names them by the names it gave them). */
  names: Record<string, string>;
};

/** One page of batches (as GET /api/v1/redrives) and the names of the subscriptions their filters name. */
export async function findNamedRedriveBatchPage(prisma: PrismaClient, input: TListRedrives, scope: Scope = GLOBAL_SCOPE): Promise<NamedRedriveBatchPage> {
  const page = await listRedriveBatchPage(prisma, input, scope);
  const ids = page.items.map((b) => (b.filter as { subscriptionId?: unknown }).subscriptionId).filter((id): id is string => typeof id === "string" && id !== "");
  return { ...page, names: await findSubscriptionNames(prisma, ids, scope) };
}
