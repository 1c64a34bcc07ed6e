// The dashboard's filters offer exactly the names the ledger and the audit log
// write: rendered from the components (react-dom/server) and compared with
// the source lists in lib/. Two filters had drifted: the subscription page's
// error class offered `connect` (attempts have connect_refused,
// connect_timeout…) and the audit page's target type offered `token` (rows
// say api_token).
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { DELIVERY_STATES, ERROR_CLASSES, DEAD_LETTER_REASON_LIST, ATTEMPT_OUTCOMES, ATTEMPT_TRIGGERS } from "../../lib/ledger/states";
import { AUDIT_ACTION_LIST, AUDIT_TARGET_TYPES, auditActionsIn, auditTargetTypesIn } from "../../lib/audit";
import { GLOBAL_SCOPE, type Scope } from "../../lib/tenants/scope";
import { DeliveryFilters, NO_FILTERS } from "../../components/dashboard/DeliveryFilters";
import { AuditFilterForm } from "../../app/(dashboard)/audit/filter-form";
import type { TAuditQuery } from "../../app/(dashboard)/audit/find-audit-entries";
import * as labels from "../../components/ui/labels";

/** The option values of the <select> that follows `labelText` in the markup (the empty "any" option left out). */
function selectOptions(html: string, labelText: string): string[] {
  const at = html.indexOf(`>${labelText}<`);
  expect(at, `no label "${labelText}"`).toBeGreaterThan(-1);
  const start = html.indexOf("<select", at);
  const end = html.indexOf("</select>", start);
  return [...html.slice(start, end).matchAll(/<option[^>]*value="([^"]*)"/g)].map((m) => m[1]).filter(Boolean);
}

describe("subscription page: delivery filters", () => {
  const html = renderToStaticMarkup(createElement(DeliveryFilters, { filters: NO_FILTERS, eventTypes: ["assignment.graded"], onChange: () => {} }));

  it("offers every error class attempts are recorded with, and nothing else", () => {
    const offered = selectOptions(html, "Error class");
    expect(offered).not.toContain("connect");
    expect(offered).toEqual([...ERROR_CLASSES]);
  });

  it("offers every delivery state", () => {
    expect(selectOptions(html, "State")).toEqual([...DELIVERY_STATES]);
  });
});

describe("audit page: filters", () => {
  const html = (scope: Scope = GLOBAL_SCOPE, q: TAuditQuery = {}) =>
    renderToStaticMarkup(
      createElement(AuditFilterForm, { q, actions: auditActionsIn(scope), targetTypes: auditTargetTypesIn(scope), district: scope.tenantId !== null }),
    );

  it("offers the target types rows are written with (api_token, not token)", () => {
    const offered = selectOptions(html(), "Target type");
    expect(offered).not.toContain("token");
    expect(offered).toEqual([...AUDIT_TARGET_TYPES]);
  });

  it("offers every audit action of the typed list", () => {
    expect(selectOptions(html(), "Action")).toEqual([...AUDIT_ACTION_LIST]);
  });

  it("a district is offered the actions its rows can have: not the catalog's, retention runs' or the notification defaults'", () => {
    const offered = selectOptions(html({ tenantId: "lincoln" }), "Action");
    for (const never of ["event_type.create", "event_type.deprecate", "retention.run", "notifications.settings.update"]) expect(offered).not.toContain(never);
    // Written with the district's tenant (a user or token confined to it, a portal link for it, its retention override): its own trail has them.
    for (const own of [
      "delivery.redrive",
      "subscription.secret.rotate",
      "user.create",
      "token.create",
      "tenant.contacts.update",
      "portal.session.create",
      "erasure.run",
      "retention.policy",
    ])
      expect(offered).toContain(own);
    expect(selectOptions(html({ tenantId: "lincoln" }), "Target type")).toEqual(AUDIT_TARGET_TYPES.filter((t) => !["event_type", "settings"].includes(t)));
  });

  it("a one-subscription portal is offered the actions whose rows name a subscription", () => {
    const offered = selectOptions(html({ tenantId: "lincoln", subscriptionId: "sub_1" }), "Action");
    expect(offered).toEqual(expect.arrayContaining(["delivery.resolve", "recover.create", "subscription.pause", "portal.session.create"]));
    for (const never of ["redrive.create", "dlq.resolve", "user.create", "tenant.contacts.update", "event_type.create"]) expect(offered).not.toContain(never);
  });

  it("an action in the URL the viewer's trail never holds stays chosen in the form, marked", () => {
    const form = html({ tenantId: "lincoln" }, { action: "event_type.create" });
    expect(selectOptions(form, "Action")).toContain("event_type.create");
    expect(form).toContain("Added an event type to the catalog (never in your audit trail)");
    expect(html(GLOBAL_SCOPE, { action: "made.up" })).toContain("made.up (unknown)");
  });
});

describe("labels", () => {
  const cases: [string, readonly string[], Record<string, string>][] = [
    ["delivery states", DELIVERY_STATES, labels.DELIVERY_STATE_LABELS],
    ["error classes", ERROR_CLASSES, labels.ERROR_CLASS_LABELS],
    ["dead-letter reasons", DEAD_LETTER_REASON_LIST, labels.DEAD_LETTER_REASON_LABELS],
    ["attempt outcomes", ATTEMPT_OUTCOMES, labels.ATTEMPT_OUTCOME_LABELS],
    ["audit actions", AUDIT_ACTION_LIST, labels.AUDIT_ACTION_LABELS],
    ["audit target types", AUDIT_TARGET_TYPES, labels.AUDIT_TARGET_TYPE_LABELS],
    ["audit actions in a district's words", AUDIT_ACTION_LIST, labels.AUDIT_ACTION_WORDS],
    ["audit target types in a district's words", AUDIT_TARGET_TYPES, labels.AUDIT_TARGET_TYPE_WORDS],
    ["attempt triggers in a district's words", ATTEMPT_TRIGGERS, labels.ATTEMPT_TRIGGER_WORDS],
  ];
  it.each(cases)("%s: one label per name, no label for a name the list lacks", (_, list, map) => {
    expect(Object.keys(map).sort()).toEqual([...list].sort());
    for (const v of list) expect(map[v]?.trim()).toBeTruthy();
  });
});

// The words a district's viewer never reads (e2e/portal-district-words.spec.ts's JARGON, less what a catalog's name may hold).
const DISTRICT_JARGON = /\btenants?\b|\boperators?\b|redriv|\brecover|\bbackfill|\bretention\b|\bleases?\b|\bledger\b|\bworkers?\b/i;

describe("a district's Audit page names every action hookledger writes in its words", () => {
  // From the list every writer is held to (writeAudit's type; test/auth/audit-actions.test.ts holds the SQL's to it): an
  // action added there without words here fails by name.
  it.each(AUDIT_ACTION_LIST.map((a) => [a, labels.AUDIT_ACTION_WORDS[a]] as const))("%s: “%s”", (action, words) => {
    expect(words, action).toMatch(/^[A-Z][^.]*[a-z)]$/);
    expect(words).not.toMatch(DISTRICT_JARGON);
    // Not the code, nor the engineers' label, in other clothes.
    expect(words.toLowerCase()).not.toContain(action.toLowerCase());
    expect(words).not.toMatch(/\b[a-z]+\.[a-z_]+\b/);
  });

  it("and its target types and the reasons an attempt was made, too", () => {
    for (const [k, v] of [...Object.entries(labels.AUDIT_TARGET_TYPE_WORDS), ...Object.entries(labels.ATTEMPT_TRIGGER_WORDS)]) expect(v, k).not.toMatch(DISTRICT_JARGON);
  });

  it("the filter offers a district those words, and a global viewer the labels it filters by", () => {
    const district = renderToStaticMarkup(
      createElement(AuditFilterForm, {
        q: {},
        actions: auditActionsIn({ tenantId: "lincoln" }),
        targetTypes: auditTargetTypesIn({ tenantId: "lincoln" }),
        district: true,
      }),
    );
    expect(district).toContain(">Changed the subscription<");
    expect(district).toContain(">Set how long deliveries are kept<");
    expect(district).not.toMatch(/>[^<]*(redriv|tenant|retention)[^<]*</i);
    const global = renderToStaticMarkup(createElement(AuditFilterForm, { q: {}, actions: auditActionsIn(GLOBAL_SCOPE), targetTypes: auditTargetTypesIn(GLOBAL_SCOPE) }));
    expect(global).toContain(">subscription edited<");
  });
});
