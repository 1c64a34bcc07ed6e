"use client";
// A signing secret, shown the one time the server answers it (create, rotate):
// the value with a copy button and the line of Standard Webhooks code a
// district's receiver uses to verify our signatures. Nothing keeps it: once
// this is closed, the dashboard cannot show it again (listings never carry it).
import { CopyButton } from "@/components/dashboard/CopyButton";
import { useViewerTenant } from "@/components/dashboard/ViewerTenant";

/** What a district's Node receiver runs on each request (the package reads the webhook-id, -timestamp and -signature headers). */
const VERIFY_SNIPPET = `import { Webhook } from "standardwebhooks";
// rawBody: the request body exactly as received, before any JSON parsing
new Webhook(process.env.WEBHOOK_SECRET).verify(rawBody, req.headers); // throws unless signed with this secret`;

export function SecretOnce({ secret, note }: { secret: string; note?: React.ReactNode }) {
  // A district's own viewer (its manager, its portal) is the one who verifies: "your endpoint", not "the district".
  const district = useViewerTenant();
  return (
    <div className="space-y-3 rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-slate-900" data-testid="secret-once">
      <p className="font-medium text-amber-950">Copy the signing secret now: it is shown this once and never again.</p>
      <div className="flex flex-col gap-2 sm:flex-row sm:items-center">
        {/* A group: a <code> or <pre> may not be named (ARIA), and a screen reader drops a name given to one. */}
        <code role="group" className="min-w-0 flex-1 break-all rounded bg-white px-2 py-1.5 font-mono text-xs ring-1 ring-slate-300" aria-label="Signing secret">
          {secret}
        </code>
        <CopyButton text={secret} label="Copy secret" />
      </div>
      {note && <p className="text-slate-700">{note}</p>}
      <div>
        <p className="text-slate-700">
          {district ? "Your endpoint verifies" : "The district verifies"} each delivery with the <code className="font-mono text-xs">standardwebhooks</code> package (npm)
          and this secret, on the raw request body:
        </p>
        <pre
          role="group"
          className="mt-1 overflow-x-auto whitespace-pre-wrap break-words rounded bg-slate-900 p-2 font-mono text-xs text-slate-100"
          aria-label="Verification code"
        >
          {VERIFY_SNIPPET}
        </pre>
        <div className="mt-1">
          <CopyButton text={VERIFY_SNIPPET} label="Copy code" />
        </div>
      </div>
    </div>
  );
}
