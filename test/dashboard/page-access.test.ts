// The navigation and the refused page read the permission table: every page's
// requireViewer permission is the one page-access.ts records, the navigation
// offers each role exactly the pages it may open, and the refused page says
// why and whom to ask.
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PAGE_PERMISSIONS, navFor, redriveHint, redrivesWords, whyRefused } from "../../components/dashboard/page-access";
import { ROLES, canAs } from "../../lib/auth/permissions";

const ROOT = path.join(process.cwd(), "app", "(dashboard)");

/** Every page under app/(dashboard), as its route ("/subscriptions/[id]"), with its source. */
function pages(): { route: string; source: string }[] {
  const out: { route: string; source: string }[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(dir, e.name));
      else if (e.name === "page.tsx") {
        const rel = path
          .relative(ROOT, dir)
          .split(path.sep)
          .filter((s) => s && !/^\(.*\)$/.test(s));
        out.push({ route: `/${rel.join("/")}`, source: readFileSync(path.join(dir, e.name), "utf8") });
      }
    }
  };
  walk(ROOT);
  return out;
}

const viewers = ROLES.flatMap((role) => [
  { role, tenantId: null },
  { role, tenantId: "lincoln" },
]);

describe("page access", () => {
  it("records every dashboard page with the permission its requireViewer asks for", () => {
    const found = pages();
    expect(found.length).toBeGreaterThan(10);
    expect(Object.keys(PAGE_PERMISSIONS).sort()).toEqual(found.map((p) => p.route).sort());
    for (const p of found) {
      const asked = [...p.source.matchAll(/requireViewer\("([\w.]+)"\)/g)].map((m) => m[1]);
      expect(asked, `${p.route} asks requireViewer for its permission`).toEqual([PAGE_PERMISSIONS[p.route]]);
    }
  });

  it("every page names itself in the browser's tab: a title of its own, or one made from what it shows", () => {
    const titles = new Map<string, string>();
    for (const p of pages()) {
      const fixed = p.source.match(/export const metadata(?:: Metadata)? = \{ title: "([^"]+)" \}/)?.[1];
      const made = /export async function generateMetadata\(/.test(p.source);
      expect(Boolean(fixed) || made, `${p.route} exports metadata with a title, or generateMetadata`).toBe(true);
      if (fixed) {
        expect(fixed, `${p.route}: the layout's template adds " · hookledger"`).not.toMatch(/hookledger/);
        expect(titles.get(fixed), `${p.route} and ${titles.get(fixed)} have one title`).toBeUndefined();
        titles.set(fixed, p.route);
      }
    }
  });

  it("the navigation links only to pages the viewer may open", () => {
    for (const v of viewers) {
      for (const item of navFor(v)) {
        expect(canAs(v, PAGE_PERMISSIONS[item.href]), `${v.role}${v.tenantId ? " (district)" : ""} → ${item.href}`).toBe(true);
      }
    }
  });

  it("gives each role the items it can use", () => {
    const labels = (role: (typeof ROLES)[number], tenantId: string | null = null) => navFor({ role, tenantId }).map((i) => i.label);
    expect(labels("admin")).toEqual(["Lookup", "Subscriptions", "Dead letters", "Redrives", "Event types", "Alerts", "Notifications", "Audit", "Admin"]);
    expect(labels("engineer")).toEqual(["Lookup", "Subscriptions", "Dead letters", "Redrives", "Event types", "Alerts", "Notifications", "Audit"]);
    // A manager cannot start a redrive: no Redrives; a district's manager does not see the system's alerts either.
    expect(labels("manager")).toEqual(["Lookup", "Subscriptions", "Dead letters", "Event types", "Alerts", "Notifications", "Audit"]);
    expect(labels("manager", "lincoln")).toEqual(["Lookup", "Subscriptions", "Dead letters", "Event types", "Notifications", "Audit"]);
    expect(labels("support")).toEqual(["Lookup", "Subscriptions", "Dead letters", "Event types", "Alerts", "Notifications", "Audit"]);
    // A district's admin manages no accounts or tokens (they could mint a global one): no Admin.
    // It reads the batches page under its own words: deliveries sent again.
    expect(labels("admin", "lincoln")).toEqual(["Lookup", "Subscriptions", "Dead letters", "Sent again", "Event types", "Notifications", "Audit"]);
    expect(labels("engineer", "lincoln")).toContain("Sent again");
    expect(labels("producer")).toEqual([]);
    // A portal token mints district portal links and reads nothing; the portal it opens is a district's manager (above).
    expect(labels("portal")).toEqual([]);
    expect(navFor(null)).toEqual([]);
  });

  it("the refused page says why and whom to ask", () => {
    expect(whyRefused("/dlq/redrive", { role: "manager" })).toBe(
      "Starting a redrive is for engineers and admins, and you are signed in as a manager: ask an engineer or an admin.",
    );
    expect(whyRefused("/alerts", { role: "manager", tenantId: "lincoln", tenantName: "Lincoln USD" })).toBe(
      "Reading the alert conditions is for accounts that see every district, and yours sees Lincoln USD only: ask a hookledger admin.",
    );
    expect(whyRefused("/admin/users", { role: "support" })).toBe("Managing the dashboard's users is for admins, and you are signed in as a support agent: ask an admin.");
    expect(whyRefused("/admin/tokens", { role: "admin", tenantId: "lincoln", tenantName: null })).toContain("yours sees lincoln only");
    expect(whyRefused("/dlq/redrive", { role: "manager", tenantId: "jefferson", tenantName: "Jefferson County Schools", portal: true })).toBe(
      "Sending many dead letters again at once is for the people who run hookledger, not for this district portal: ask whoever sent you the portal link.",
    );
    expect(whyRefused("/nowhere/at/all", { role: "engineer" })).toBe("Opening this page is for admins, and you are signed in as an engineer: ask an admin.");
  });

  it("the refused page names a batch for a district by what it does, not as a redrive", () => {
    expect(whyRefused("/dlq/redrive", { role: "manager", tenantId: "lincoln", tenantName: "Lincoln USD" })).toBe(
      "Sending many dead letters again at once is for engineers and admins, and you are signed in as a manager: ask an engineer or an admin.",
    );
    expect(whyRefused("/dlq/redrive", { role: "manager", tenantId: "lincoln", portal: true })).toMatch(
      /^Sending many dead letters again at once is for the people who run hookledger/,
    );
    expect(whyRefused("/dlq/redrive", { role: "manager" })).toMatch(/^Starting a redrive is for engineers and admins/);
  });

  it("beside a dead letter, a viewer who may not redrive is told whom to ask, a district in its portal in its own words", () => {
    for (const role of ["engineer", "admin"] as const) for (const where of ["delivery", "filter"] as const) expect(redriveHint({ role }, where)).toBeNull();
    // A manager (a district's, its portal too) sends one dead letter again itself; a batch is an engineer's.
    expect(redriveHint({ role: "manager" }, "delivery")).toBeNull();
    expect(redriveHint({ role: "manager", portal: true }, "delivery")).toBeNull();
    expect(redriveHint({ role: "manager" }, "filter")).toBe(
      "Send one dead letter again from its page (Redrive…). A redrive by filter is for engineers and admins: ask one, with the subscription and reason chosen above.",
    );
    expect(redriveHint({ role: "support" }, "delivery")).toBe("Redrive is for engineers and admins: ask one, with this delivery's receipt (Copy receipt).");
    const portal = redriveHint({ role: "manager", portal: true }, "filter")!;
    expect(portal).toContain("send a dead letter again from its page (Send again…)");
    expect(portal).toContain("ask whoever sent you the portal link");
    expect(portal).not.toMatch(/engineer/i);
    // A read-only link (a support agent's) sends nothing: it asks.
    expect(redriveHint({ role: "support", portal: true }, "delivery")).toContain("ask whoever sent you the portal link");
    // A district's own account (signed in, not through a link) is a district too: its words, and it asks hookledger's people.
    const account = redriveHint({ role: "manager", district: true }, "filter")!;
    expect(account).toBe(
      "Once your endpoint is fixed, send a dead letter again from its page (Send again…). To have many sent at once, ask the people who run hookledger, with the subscription and reason chosen above.",
    );
    expect(redriveHint({ role: "support", district: true }, "delivery")).toBe(
      "Once your endpoint is fixed, these can be sent again by your district's managers or the people who run hookledger: ask them, with this delivery's receipt (Copy receipt).",
    );
    // A district's engineer may start a batch: nothing to ask.
    expect(redriveHint({ role: "engineer", district: true }, "filter")).toBeNull();
  });

  it("the Redrives page speaks to a district that may not start a batch in its words, whether signed in or through a link", () => {
    const account = redrivesWords({ role: "manager", district: true });
    expect(account.description).not.toMatch(/recover|backfill|redrive/i);
    // A district's engineer starts batches itself, in the same words.
    const engineer = redrivesWords({ role: "engineer", district: true });
    expect(`${engineer.description} ${engineer.empty}`).not.toMatch(/recover|backfill|redriv/i);
    expect(account.empty).toBe(
      "Nothing has been sent again for your district. If your endpoint missed deliveries, ask the people who run hookledger to have them sent again; the batch shows here.",
    );
    expect(redrivesWords({ role: "manager", portal: true, district: true }).empty).toContain("ask whoever sent you the portal link");
    // Who may start one is told how, district or not (a district in its words, with the page's button).
    expect(redrivesWords({ role: "engineer", district: true }).empty).toBe(
      "Nothing has been sent again for your district. Send dead letters again from the Dead letters page, or with Send dead letters again.",
    );
    expect(redrivesWords({ role: "manager" }).empty).toBe("Engineers and admins start redrives from the Dead letters page; their batches show here.");
  });
});
