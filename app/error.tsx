"use client";
// The dashboard's own layout failed (it reads the viewer's session and district from the database): without this,
// Next's bare "This page couldn't load" page. The layout's frame is what failed, so this stands alone.
import { ServerError } from "@/components/dashboard/ServerError";

export default function RootError({ error, retry }: { error: unknown; retry: () => void }) {
  return (
    <main className="mx-auto max-w-xl space-y-3 p-8">
      <p className="text-lg font-semibold">hookledger</p>
      <ServerError error={error} retry={retry} />
    </main>
  );
}
