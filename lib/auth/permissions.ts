import { listInWords } from "../words";

// The one permission table (docs/STYLE.md #4): the server enforces it, the UI uses
// it to hide what a role cannot do. A route or action with no entry here is a
// bug, and the permission matrix test fails on it.
// `portal` is for API tokens only (lib/auth/users.ts USER_ROLES leaves it out): the SaaS's backend mints district
// portal links with it and can do nothing else.
export const ROLES = ["producer", "support", "manager", "engineer", "admin", "portal"] as const;
export type Role = (typeof ROLES)[number];

const READERS: Role[] = ["support", "manager", "engineer", "admin"];
const MANAGERS: Role[] = ["manager", "engineer", "admin"];
const ENGINEERS: Role[] = ["engineer", "admin"];
const ADMINS: Role[] = ["admin"];

export const ROLE_PERMISSIONS = {
  "events.publish": ["producer", "admin"],
  "deliveries.read": READERS,
  "subscriptions.read": READERS,
  "dlq.read": READERS,
  "audit.read": READERS,
  // The alert conditions are the whole system's (every district's queue, dead letters and workers).
  "alerts.read": READERS,
  "subscriptions.create": MANAGERS,
  "subscriptions.update": MANAGERS,
  "subscriptions.pause": MANAGERS,
  "subscriptions.test": MANAGERS,
  "subscriptions.archive": MANAGERS,
  // One delivery to the viewer's own endpoint, sent again once the endpoint is fixed (a dead letter) or at once (a
  // scheduled retry): a district's manager and its portal do it themselves, as a Svix or Convoy endpoint owner does.
  // A batch (redrives.create), recover and backfill stay with engineers: they pace many deliveries at once.
  "deliveries.redrive": MANAGERS,
  "deliveries.resolve": ENGINEERS,
  "deliveries.resend": ENGINEERS,
  "redrives.create": ENGINEERS,
  "redrives.cancel": ENGINEERS,
  "subscriptions.recover": ENGINEERS,
  "subscriptions.backfill": ENGINEERS,
  // A manager already sees the secret of a subscription it creates; a rotation shows no more than that.
  "secrets.rotate": MANAGERS,
  // Ending an overlap early can cut off a receiver still switching over.
  "secrets.expire": ADMINS,
  // Irreversible: an event's payload and subject values are destroyed.
  "erasures.create": ADMINS,
  // What is kept and for how long, and removing it: a run deletes finished deliveries for good.
  "retention.read": ADMINS,
  "retention.manage": ADMINS,
  "users.manage": ADMINS,
  "tokens.manage": ADMINS,
  // Tenants (districts): listing and registering them. A scoped admin is refused too (lib/tenants/manage-tenants.ts).
  "tenants.manage": ADMINS,
  // Portal links sign a browser in as a district: minted by the SaaS's backend (a portal token) or an admin.
  "portal.sessions.create": ["portal", "admin"],
  "portal.sessions.revoke": ["portal", "admin"],
  // The event catalog is global (every tenant receives the same types): every reader reads it, engineers change it.
  "event_types.read": READERS,
  "event_types.manage": ENGINEERS,
  // Whom to tell when a district's endpoint fails (lib/notify/contacts.ts): a global admin for any tenant, a district's
  // manager (or its portal) for its own; the notices sent are read like the audit log.
  "contacts.read": READERS,
  "contacts.update": MANAGERS,
  "notifications.read": READERS,
  "notifications.manage": ADMINS,
} as const satisfies Record<string, readonly Role[]>;

export type Permission = keyof typeof ROLE_PERMISSIONS;

/** Each permission as the task it allows, in the words a refusal uses ("The support role may not change subscriptions"). */
const TASKS = {
  "events.publish": "publish events",
  "deliveries.read": "read deliveries",
  "subscriptions.read": "see subscriptions",
  "dlq.read": "see the dead-letter queue",
  "audit.read": "read the audit log",
  "alerts.read": "see the alerts",
  "subscriptions.create": "create subscriptions",
  "subscriptions.update": "change subscriptions",
  "subscriptions.pause": "pause or resume subscriptions",
  "subscriptions.test": "send test events",
  "subscriptions.archive": "archive subscriptions",
  "deliveries.redrive": "redrive deliveries",
  "deliveries.resolve": "resolve dead letters",
  "deliveries.resend": "resend deliveries",
  "redrives.create": "start redrives",
  "redrives.cancel": "cancel redrives",
  "subscriptions.recover": "recover a subscription's failed deliveries",
  "subscriptions.backfill": "backfill a subscription",
  "secrets.rotate": "rotate signing secrets",
  "secrets.expire": "end a secret's overlap early",
  "erasures.create": "erase events",
  "retention.read": "see what is kept",
  "retention.manage": "change or run retention",
  "users.manage": "manage users",
  "tokens.manage": "manage API tokens",
  "tenants.manage": "manage tenants",
  "portal.sessions.create": "make district portal links",
  "portal.sessions.revoke": "revoke district portal links",
  "event_types.read": "read the event catalog",
  "event_types.manage": "change the event catalog",
  "contacts.read": "see notification contacts",
  "contacts.update": "change notification contacts",
  "notifications.read": "read notifications",
  "notifications.manage": "change the default notification settings",
} as const satisfies Record<Permission, string>;

/** A 403's words for a role without the permission: the task, and which roles have it (whom to ask). */
export function roleRefusal(role: Role | undefined | null, permission: Permission): string {
  return `The ${role ?? "anonymous"} role may not ${TASKS[permission]}; that takes the ${listInWords(ROLE_PERMISSIONS[permission], "or")} role.`;
}

/** A 403's words for a principal confined to one tenant asking for a global-only permission. */
export function confinedRefusal(tenantId: string | null | undefined, permission: Permission): string {
  return `Your account is confined to tenant ${tenantId}; only a global account may ${TASKS[permission]}.`;
}

export function can(role: Role | undefined | null, permission: Permission): boolean {
  if (!role) return false;
  return (ROLE_PERMISSIONS[permission] as readonly Role[]).includes(role);
}

/**
 * What a principal confined to one tenant never holds, whatever its role: these act on every tenant at once (an
 * erasure, the retention policy and runs) or on the accounts, tokens and tenants themselves (a district's admin could
 * otherwise mint a global token).
 */
export const GLOBAL_ONLY_PERMISSIONS: readonly Permission[] = [
  "alerts.read",
  "erasures.create",
  "users.manage",
  "tokens.manage",
  "tenants.manage",
  "retention.read",
  "retention.manage",
  // A district must not mint links into itself or another district.
  "portal.sessions.create",
  "portal.sessions.revoke",
  "event_types.manage",
  // The default every district's notices follow.
  "notifications.manage",
];

/** `can` for a principal: its role's permission, and not a global-only one when it is confined to a tenant. */
export function canAs(p: { role: Role | undefined | null; tenantId?: string | null } | null | undefined, permission: Permission): boolean {
  if (!p || !can(p.role, permission)) return false;
  return !(p.tenantId && GLOBAL_ONLY_PERMISSIONS.includes(permission));
}
