"use client";
// What a page says when the server could not render it. A server component's
// error reaches the browser as a bare reference (Next hides its message), so
// the page asks /api/health?scope=db whether the database answers: a database
// that is stopped or restarting is said in those words, and the page tries
// again by itself once it is back, instead of "something went wrong" and a
// button that only helps after someone guessed the cause was gone.
import { useEffect, useState } from "react";
import { ErrorState } from "@/components/ui/kit";

/** How often a page waiting for the database asks again. */
const RECHECK_MS = 3_000;

type Verdict = "checking" | "database down" | "other";

async function databaseDown(): Promise<boolean> {
  try {
    const r = await fetch("/api/health?scope=db", { cache: "no-store" });
    if (r.status !== 503) return false;
    const body = (await r.json()) as { reason?: string };
    return body.reason === "database unavailable";
  } catch {
    // The dashboard itself is not answering: not something this page can name.
    return false;
  }
}

export function ServerError({ error, retry }: { error: unknown; retry: () => void }) {
  const [verdict, setVerdict] = useState<Verdict>("checking");
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let wasDown = false;
    const check = async () => {
      const down = await databaseDown();
      if (!live) return;
      if (down) {
        wasDown = true;
        setVerdict("database down");
        timer = setTimeout(check, RECHECK_MS);
      } else if (wasDown) retry();
      else setVerdict("other");
    };
    void check();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [retry]);

  const digest = (error as { digest?: string } | null)?.digest;
  if (verdict === "database down")
    return (
      <div className="space-y-3">
        <h1 className="text-2xl font-semibold">hookledger cannot reach its database</h1>
        <div role="alert" className="space-y-2 rounded-lg border border-amber-300 bg-amber-50 px-4 py-3 text-sm text-amber-950">
          <p className="font-medium">The database is stopped or restarting, so this page cannot be shown right now.</p>
          <p>
            The workers wait for it and carry on by themselves once it is back; publishers are answered 503 and asked to retry. This page tries again every few seconds
            and shows itself when the database answers.
          </p>
          {digest && <p className="text-amber-900">Reference {digest} (the server log has the details).</p>}
        </div>
      </div>
    );
  return (
    <div className="space-y-3">
      <h1 className="text-2xl font-semibold">Something went wrong</h1>
      <ErrorState error={digest ? new Error(`The server could not answer (reference ${digest}); the server log has the details.`) : error} retry={retry} />
    </div>
  );
}
