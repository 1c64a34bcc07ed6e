// The sign-in page's answer to a district portal link that did not open (lib/portal/open-link.ts), or to a portal
// session that ended: one line saying why, and no password form (this page may be shown inside the SaaS's frame,
// where a password form could be clickjacked; proxy.ts).
const ASK = "ask the service that gave it to you for a new one.";

const LINES = {
  expired: `This portal link has expired; ${ASK}`,
  used: `This portal link has already been used; ${ASK}`,
  revoked: `This portal link was revoked; ${ASK}`,
  invalid: `This portal link is not valid (it may have been cut short when copied); ${ASK}`,
  ended: `Your district portal session has ended; ${ASK.replace("it", "the link")}`,
  signed_out: "You have signed out of the district portal.",
} as const;

type PortalNoticeReason = keyof typeof LINES;

export function portalNoticeReason(value: unknown): PortalNoticeReason | null {
  return typeof value === "string" && Object.hasOwn(LINES, value) ? (value as PortalNoticeReason) : null;
}

export function PortalNotice({ reason }: { reason: PortalNoticeReason }) {
  return (
    <div>
      <h1 className="text-2xl font-semibold tracking-tight">District portal</h1>
      <p role="alert" data-testid="portal-notice" className="mt-4 rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900">
        {LINES[reason]}
      </p>
      <p className="mt-4 text-sm text-slate-600">
        Have a hookledger account?{" "}
        <a href="/signin" target="_top" className="text-blue-700 underline">
          Sign in with your password
        </a>
        .
      </p>
    </div>
  );
}
