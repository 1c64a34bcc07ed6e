import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { cache } from "react";
import { requireViewer } from "@/lib/auth/session";
import { can, canAs } from "@/lib/auth/permissions";
import { AppError } from "@/lib/errors";
import { findEndpointAnswers, findSubscriptionDeliveries, getSubscriptionOverview } from "@/lib/dashboard/subscriptions";
import { SubscriptionClient } from "./page-client";
import { scopeOf } from "@/lib/tenants/scope";
import { fittingRange, isRange, rangeOf } from "@/components/subscriptions/outcome-ranges";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ id: string }>; searchParams: Promise<{ range?: string | string[] }> };

const viewerOf = cache(() => requireViewer("subscriptions.read"));

/** The subscription over a window, as the viewer may see it: read once for the page and its title. */
const overviewOf = cache(async (id: string, range: ReturnType<typeof rangeOf>) => {
  const viewer = await viewerOf();
  return getSubscriptionOverview({ id, range, scope: scopeOf(viewer), storedUrl: canAs(viewer, "subscriptions.update") });
});

export async function generateMetadata({ params, searchParams }: Props): Promise<Metadata> {
  const s = await overviewOf((await params).id, rangeOf((await searchParams).range)).catch(() => null);
  return { title: s?.name ?? "Subscription" };
}

export default async function SubscriptionPage({ params, searchParams }: Props) {
  const viewer = await viewerOf();
  const { id } = await params;
  // The outcomes chart's range is kept in the address (?range=7d), so a reload or a shared link opens the same window.
  const asked = (await searchParams).range;
  let range = rangeOf(asked);
  const overviewFor = (r: typeof range) =>
    overviewOf(id, r).catch((err) => {
      if (err instanceof AppError && err.code === "not_found") notFound();
      throw err;
    });
  let overview = await overviewFor(range);
  // None asked: a window that fits the last day's attempts (read again only when it is narrower than the day).
  if (!isRange(asked)) {
    const fit = fittingRange(overview.series, Date.now());
    if (fit !== range) overview = await overviewFor((range = fit));
  }
  const [answers, deliveries] = await Promise.all([
    findEndpointAnswers({ subscriptionId: id, scope: scopeOf(viewer) }),
    findSubscriptionDeliveries({ subscriptionId: id, limit: 25, scope: scopeOf(viewer) }),
  ]);
  return (
    <SubscriptionClient
      initial={{ overview, answers, deliveries, range }}
      initialAt={Date.now()}
      canPause={can(viewer.role, "subscriptions.pause")}
      canEdit={can(viewer.role, "subscriptions.update")}
      canRedrive={can(viewer.role, "redrives.create")}
      canRotate={can(viewer.role, "secrets.rotate")}
      canExpireSecret={can(viewer.role, "secrets.expire")}
      canArchive={can(viewer.role, "subscriptions.archive")}
    />
  );
}
