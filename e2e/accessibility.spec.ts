// Every dashboard page, as a global admin and as a district's portal, is held to WCAG 2.1 A and AA by axe-core: the
// pages of the route list (the one page-titles.spec.ts walks), a lookup with results, and the pages a support agent
// or a district opens most (Lookup, Subscriptions, a subscription, Dead letters) at 390 px as well. A serious or
// critical violation fails the run, listed by page, rule and the elements at fault, all pages read before it fails.
import axe from "axe-core";
import { expect, test, type Page } from "@playwright/test";
import { canAs } from "../lib/auth/permissions";
import { PAGE_PERMISSIONS } from "../components/dashboard/page-access";
import { api, revealed, signIn } from "./helpers";
import { closeE2eDb, seedDetailPages } from "./dashboard-seed";

test.afterAll(closeE2eDb);

const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];
const FAILING_IMPACTS = new Set(["serious", "critical"]);

type AxeNode = { target: string[]; element?: Element; any: { data?: { messageKey?: string; expectedContrastRatio?: string } | null }[] };
type Violation = { id: string; impact: string | null; help: string; nodes: AxeNode[] };
declare global {
  interface Window {
    axe: { run: (context: unknown, options: unknown) => Promise<{ violations: Violation[]; incomplete: Violation[] }> };
  }
}

/**
 * The serious and critical violations axe finds on the page as it is now, one line each: page, rule, selectors. And
 * the text axe leaves unjudged beside an image ("imgNode": a chart legend's name next to its colour swatch, which is not
 * behind the text): its contrast is measured here against the nearest background colour, and short of what axe asks is
 * a color-contrast violation too.
 */
async function audit(page: Page, label: string): Promise<string[]> {
  await revealed(page);
  await expect(page.getByRole("heading", { level: 1 }), label).toBeVisible();
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ content: axe.source });
  const { violations, beside } = await page.evaluate(
    async ([tags]) => {
      const r = await window.axe.run(document, { runOnly: { type: "tag", values: tags }, resultTypes: ["violations", "incomplete"], elementRef: true });
      const rgb = (css: string) => (css.match(/[\d.]+/g) ?? []).map(Number);
      const luminance = ([r, g, b]: number[]) =>
        [r, g, b].map((c) => (c / 255 <= 0.04045 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4)).reduce((s, c, i) => s + c * [0.2126, 0.7152, 0.0722][i], 0);
      const unjudged = r.incomplete.find((v) => v.id === "color-contrast")?.nodes.filter((n) => n.any[0]?.data?.messageKey === "imgNode") ?? [];
      const short = unjudged.flatMap((n) => {
        const el = n.element;
        if (!el) return [];
        let bg = el as Element | null;
        while (bg && (rgb(getComputedStyle(bg).backgroundColor)[3] ?? 1) === 0) bg = bg.parentElement;
        const [fg, back] = [luminance(rgb(getComputedStyle(el).color)), bg ? luminance(rgb(getComputedStyle(bg).backgroundColor)) : 1];
        const ratio = (Math.max(fg, back) + 0.05) / (Math.min(fg, back) + 0.05);
        return ratio < parseFloat(n.any[0]?.data?.expectedContrastRatio ?? "4.5") ? [`${n.target.join(" ")} (${ratio.toFixed(2)}:1)`] : [];
      });
      // Elements do not cross back from the browser.
      return { violations: r.violations.map((v) => ({ ...v, nodes: v.nodes.map(({ target, any }) => ({ target, any })) })), beside: short };
    },
    [TAGS],
  );
  return [
    ...violations
      .filter((v) => FAILING_IMPACTS.has(v.impact ?? ""))
      .map((v) => `${label}: ${v.id} (${v.impact}, ${v.help}) × ${v.nodes.length}: ${v.nodes.map((n) => n.target.join(" ")).join(" | ")}`),
    ...(beside.length ? [`${label}: color-contrast (serious, text beside an image, measured by this spec) × ${beside.length}: ${beside.join(" | ")}`] : []),
  ];
}

test("every dashboard page, as an admin and as a district's portal, has no serious WCAG 2.1 AA violation at 1280 px, key pages at 390 px too", async ({
  browser,
  page,
  request,
}) => {
  test.setTimeout(120_000);
  const run = Date.now().toString(36);
  const tenant = `a11y_${run}`;
  expect((await api(request, "POST", "/api/v1/tenants", { id: tenant, name: `Alder ${run} Schools` })).status).toBe(201);
  const { ids, subscriptionId } = await seedDetailPages(request, {
    tenant,
    name: `Alder SIS ${run}`,
    eventId: `evt_a11y_${run}`,
    studentId: `stu_a${run}`,
    attempts: [
      { minutesAgo: 9, status: 503, errorClass: "http_5xx", outcome: "retry", ms: 40 },
      { minutesAgo: 2, status: 410, errorClass: "http_410", outcome: "dead_letter", ms: 12 },
    ],
    reason: "gone",
    incident: "INC-7 a11y",
  });
  const pathOf = (route: string) => route.replace("[id]", ids[route] ?? "");
  const narrow = [`/?q=stu_a${run}`, "/subscriptions", `/subscriptions/${subscriptionId}`, "/dlq"];

  const found: string[] = [];
  async function walk(p: Page, who: string, routes: string[]) {
    await p.setViewportSize({ width: 1280, height: 900 });
    for (const path of [...routes.map(pathOf), `/?q=stu_a${run}`]) {
      await p.goto(path);
      found.push(...(await audit(p, `${who} ${path} @1280`)));
    }
    await p.setViewportSize({ width: 390, height: 844 });
    for (const path of narrow) {
      await p.goto(path);
      found.push(...(await audit(p, `${who} ${path} @390`)));
    }
  }

  await signIn(page, "admin");
  await walk(page, "admin", Object.keys(PAGE_PERMISSIONS));

  // A portal link signs its browser in as the district's manager (lib/portal: a read-only link as support).
  const link = await api(request, "POST", "/api/v1/portal/sessions", { tenant, expiresInSeconds: 3600 });
  expect(link.status, JSON.stringify(link.json)).toBe(201);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const portal = await context.newPage();
  await portal.goto(link.json.url);
  await expect(portal.getByTestId("portal-marker")).toBeVisible();
  const district = { role: "manager" as const, tenantId: tenant };
  await walk(
    portal,
    "portal",
    Object.keys(PAGE_PERMISSIONS).filter((route) => canAs(district, PAGE_PERMISSIONS[route])),
  );
  await context.close();

  if (found.length) console.log(`axe: ${found.length} serious or critical violations\n${found.join("\n")}`);
  expect(found).toEqual([]);
});
