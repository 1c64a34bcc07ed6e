import type { Metadata } from "next";
import { lookupTitle } from "@/lib/page-title";
import { requireViewer } from "@/lib/auth/session";
import { findLookupResults, type LookupResult } from "@/lib/dashboard/lookup";
import { LookupClient } from "./page-client";
import { scopeOf } from "@/lib/tenants/scope";

export const dynamic = "force-dynamic";

export async function generateMetadata({ searchParams }: { searchParams: Promise<{ q?: string }> }): Promise<Metadata> {
  const { q } = await searchParams;
  return { title: lookupTitle(typeof q === "string" ? q.trim().slice(0, 200) : "") };
}

export default async function LookupPage({ searchParams }: { searchParams: Promise<{ q?: string }> }) {
  const viewer = await requireViewer("deliveries.read");
  const { q } = await searchParams;
  const query = typeof q === "string" ? q.trim().slice(0, 200) : "";
  let initial: LookupResult | null = null;
  if (query) initial = await findLookupResults({ q: query }, undefined, scopeOf(viewer));
  return <LookupClient initialQuery={query} initial={initial} initialAt={Date.now()} />;
}
