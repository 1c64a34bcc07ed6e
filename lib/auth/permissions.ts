// The one permission table (STYLE.md #4): the server enforces it, the UI uses
// it to hide what a role cannot do. A route or action with no entry here is a
// bug, and the permission matrix test fails on it.
export const ROLES = ["producer", "support", "manager", "engineer", "admin"] as const;
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
  "subscriptions.create": MANAGERS,
  "subscriptions.update": MANAGERS,
  "subscriptions.pause": MANAGERS,
  "deliveries.redrive": ENGINEERS,
  "redrives.create": ENGINEERS,
  "redrives.cancel": ENGINEERS,
  "secrets.rotate": ADMINS,
  "users.manage": ADMINS,
  "tokens.manage": ADMINS,
} as const satisfies Record<string, readonly Role[]>;

export type Permission = keyof typeof ROLE_PERMISSIONS;

export function can(role: Role | undefined | null, permission: Permission): boolean {
  if (!role) return false;
  return (ROLE_PERMISSIONS[permission] as readonly Role[]).includes(role);
}
