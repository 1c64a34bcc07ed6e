// Who may open each dashboard page and who sees it in the navigation, read
// from the one permission table (lib/auth/permissions.ts): the pages'
// requireViewer calls name the same permissions (test/dashboard/page-access.test.ts
// holds the two equal), so the navigation never links to a page that answers 403.
import { ROLE_PERMISSIONS, ROLES, can, canAs, type Permission, type Role } from "@/lib/auth/permissions";
import { listInWords } from "@/lib/words";

/** Each page's route (as its app/(dashboard) folder names it) and the permission its requireViewer asks for. */
export const PAGE_PERMISSIONS: Record<string, Permission> = {
  "/": "deliveries.read",
  "/deliveries/[id]": "deliveries.read",
  "/subscriptions": "subscriptions.read",
  "/subscriptions/[id]": "subscriptions.read",
  "/dlq": "dlq.read",
  "/dlq/redrive": "redrives.create",
  "/redrives": "dlq.read",
  "/redrives/[id]": "dlq.read",
  "/alerts": "alerts.read",
  "/audit": "audit.read",
  "/notifications": "notifications.read",
  "/catalog": "event_types.read",
  "/admin/users": "users.manage",
  "/admin/tokens": "tokens.manage",
  "/admin/tenants": "tenants.manage",
  "/admin/retention": "retention.read",
};

type NavItem = { href: string; label: string; /** Highlighted on these paths too. */ under?: string };
type NavRule = NavItem & { permission: Permission };

const NAV: NavRule[] = [
  { href: "/", label: "Lookup", permission: "deliveries.read", under: "/deliveries" },
  { href: "/subscriptions", label: "Subscriptions", permission: "subscriptions.read" },
  { href: "/dlq", label: "Dead letters", permission: "dlq.read" },
  // The batches page is where redrives are started and followed. A role that cannot start one still opens a batch
  // from the links that name it (a delivery's timeline, the audit log), but has nothing to do on the list.
  { href: "/redrives", label: "Redrives", permission: "redrives.create" },
  { href: "/catalog", label: "Event types", permission: PAGE_PERMISSIONS["/catalog"] },
  { href: "/alerts", label: "Alerts", permission: PAGE_PERMISSIONS["/alerts"] },
  { href: "/notifications", label: "Notifications", permission: PAGE_PERMISSIONS["/notifications"] },
  { href: "/audit", label: "Audit", permission: PAGE_PERMISSIONS["/audit"] },
  { href: "/admin/users", label: "Admin", permission: PAGE_PERMISSIONS["/admin/users"], under: "/admin" },
];

type Viewer = { role: Role | null | undefined; tenantId?: string | null } | null | undefined;

/** The items a district's account reads in its own words: it has never heard of a redrive, only of deliveries sent again. */
const DISTRICT_NAV_LABEL: Record<string, string> = { "/redrives": "Sent again" };

/** The navigation a viewer sees: the items whose permission it holds (a district's account: not the global-only ones). */
export function navFor(viewer: Viewer): NavItem[] {
  return NAV.filter((n) => canAs(viewer, n.permission)).map(({ href, label, under }) => ({
    href,
    label: (viewer?.tenantId && DISTRICT_NAV_LABEL[href]) || label,
    ...(under ? { under } : {}),
  }));
}

/** What each permission a page asks for lets its holder do, for the sentence on the refused page. */
const PURPOSE: Partial<Record<Permission, string>> = {
  "redrives.create": "Starting a redrive",
  "alerts.read": "Reading the alert conditions",
  "users.manage": "Managing the dashboard's users",
  "tokens.manage": "Managing API tokens",
  "tenants.manage": "Registering districts",
  "retention.read": "Reading the retention policy",
};

/** The same, in the words of a district's viewer, where they differ. */
const DISTRICT_PURPOSE: Partial<Record<Permission, string>> = {
  "redrives.create": "Sending many dead letters again at once",
};

/** The page rule for a path ("/subscriptions/sub_1" → "/subscriptions/[id]"); null for a path no page has. */
function pageFor(pathname: string): string | null {
  const parts = pathname.split("?")[0].split("/").filter(Boolean);
  const matches = (route: string) => {
    const r = route.split("/").filter(Boolean);
    return r.length === parts.length && r.every((seg, i) => /^\[.+\]$/.test(seg) || seg === parts[i]);
  };
  return Object.keys(PAGE_PERMISSIONS).find(matches) ?? null;
}

const ROLE_NAMES: Record<Role, string> = {
  producer: "producer",
  support: "support agent",
  manager: "manager",
  engineer: "engineer",
  admin: "admin",
  portal: "portal link issuer",
};
const article = (w: string) => (/^[aeiou]/i.test(w) ? `an ${w}` : `a ${w}`);

/**
 * One sentence for the refused page: what the page is for, why this account may not open it, and whom to ask
 * (the roles the permission table gives it to; an admin when the account is confined to a district).
 */
export function whyRefused(pathname: string, viewer: { role: Role; tenantId?: string | null; tenantName?: string | null; portal?: boolean }): string {
  const route = pageFor(pathname);
  const permission = route ? PAGE_PERMISSIONS[route] : null;
  // A district (its account or its portal) has never heard of a redrive: the page is named for what it does.
  const what = (permission && viewer.tenantId && DISTRICT_PURPOSE[permission]) || (permission && PURPOSE[permission]) || "Opening this page";
  // A district in its portal signed in as nobody and has never heard of the dashboard's roles.
  if (viewer.portal) return `${what} is for the people who run hookledger, not for this district portal: ask whoever sent you the portal link.`;
  if (!permission || !can(viewer.role, permission)) {
    const holders = permission
      ? ROLES.filter((r) => r !== "producer" && r !== "portal" && (ROLE_PERMISSIONS[permission] as readonly Role[]).includes(r))
      : (["admin"] as Role[]);
    return `${what} is for ${listInWords(
      holders.map((r) => `${ROLE_NAMES[r]}s`),
      "and",
    )}, and you are signed in as ${article(ROLE_NAMES[viewer.role])}: ask ${listInWords(
      holders.map((r) => article(ROLE_NAMES[r])),
      "or",
    )}.`;
  }
  // The role may, the district confinement may not (GLOBAL_ONLY_PERMISSIONS).
  return `${what} is for accounts that see every district, and yours sees ${viewer.tenantName ?? viewer.tenantId ?? "one district"} only: ask a hookledger admin.`;
}

/**
 * Who a viewer is to the words below: hookledger's own staff, or a district (its portal, or an account confined to
 * it), which has never heard of engineers, redrives or batches and is told what to do in its own terms.
 */
type Audience = { role: Role; portal?: boolean; district?: boolean };

/** Whom a district asks for what it may not do itself: whoever sent its portal link, or the people who run hookledger. */
function districtAsks(viewer: Audience): string {
  return viewer.portal ? "whoever sent you the portal link" : "the people who run hookledger";
}

/**
 * For a viewer who may not send a dead letter again, beside it (`where`: "delivery", the delivery page, which sends
 * one, `deliveries.redrive`; "filter", the Dead letters page's groups, which a batch sends, `redrives.create`): who
 * does and what to give them, in the viewer's words. A district has never heard of engineers; it sends one from its
 * page itself and asks for a batch. null for a viewer who may.
 */
export function redriveHint(viewer: Audience, where: "delivery" | "filter"): string | null {
  if (can(viewer.role, where === "delivery" ? "deliveries.redrive" : "redrives.create")) return null;
  const one = can(viewer.role, "deliveries.redrive");
  const district = viewer.portal || viewer.district;
  if (where === "filter" && one)
    return district
      ? `Once your endpoint is fixed, send a dead letter again from its page (Send again…). To have many sent at once, ask ${districtAsks(viewer)}, with the subscription and reason chosen above.`
      : "Send one dead letter again from its page (Redrive…). A redrive by filter is for engineers and admins: ask one, with the subscription and reason chosen above.";
  const what = where === "delivery" ? "this delivery's receipt (Copy receipt)" : "the subscription and reason chosen above";
  if (district)
    return viewer.portal
      ? `Once your endpoint is fixed, these can be sent again by the people who run hookledger: ask whoever sent you the portal link, with ${what}.`
      : `Once your endpoint is fixed, these can be sent again by your district's managers or the people who run hookledger: ask them, with ${what}.`;
  return `Redrive is for engineers and admins: ask one, with ${what}.`;
}

/**
 * The Redrives page's words for its viewer: what the list is, and what its empty state says about who starts a batch.
 * Someone who may start one is told how; an account that may not, which roles do; a district that may not (which
 * reaches the page by a link or its address, never the navigation) that its deliveries are sent again by the people
 * who run hookledger, and whom it asks; a district that may, that it sends dead letters again itself.
 */
export function redrivesWords(viewer: Audience): { description: string; empty: string } {
  const canStart = can(viewer.role, "redrives.create");
  if (viewer.portal || (viewer.district && !canStart))
    return {
      description: "Deliveries to your district's endpoints sent again in paced batches by the people who run hookledger: who, why, at what rate, and how far they got.",
      empty: `Nothing has been sent again for your district. If your endpoint missed deliveries, ask ${districtAsks(viewer)} to have them sent again; the batch shows here.`,
    };
  // A district's engineer or admin starts batches itself, in the same words.
  if (viewer.district)
    return {
      description: "Deliveries to your district's endpoints sent again in paced batches: who, why, at what rate, and how far they got.",
      empty: "Nothing has been sent again for your district. Send dead letters again from the Dead letters page, or with Send dead letters again.",
    };
  return {
    description: "Paced batches (redrives of dead letters, recovers of a window, backfills of a new endpoint): who, why, at what rate, and how far they got.",
    empty: canStart
      ? "Start a redrive from the Dead letters page or with New redrive."
      : "Engineers and admins start redrives from the Dead letters page; their batches show here.",
  };
}
