"use client";
import { usePathname } from "next/navigation";

const WHAT: [RegExp, string][] = [
  [/^\/deliveries\//, "That delivery"],
  [/^\/subscriptions\//, "That subscription"],
  [/^\/redrives\//, "That batch (a redrive, recovery or backfill)"],
];

/** The not-found page's sentence, naming what the address asked for (only the browser's address says). */
export function NotFoundReason() {
  const path = usePathname();
  const what = WHAT.find(([re]) => re.test(path))?.[1] ?? "That page";
  return (
    <p className="text-slate-700" data-testid="not-found-reason">
      {what} does not exist, or your account does not see it. The address may have been typed or copied wrong.
    </p>
  );
}
