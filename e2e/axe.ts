// axe-core (WCAG 2.1 A and AA) on the page as it is now, for the accessibility specs: a serious or critical violation
// is one line (label, rule, the elements at fault), so a spec reads every page it opens before it fails on the lot.
import axe from "axe-core";
import { expect, type Locator, type Page } from "@playwright/test";
import { revealed } from "./helpers";

const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];
const FAILING_IMPACTS = new Set(["serious", "critical"]);

type AxeNode = { target: string[]; element?: Element; failureSummary?: string; any: { data?: { messageKey?: string; expectedContrastRatio?: string } | null }[] };
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
 * a color-contrast violation too. So is a name given to an element whose role may not be named, which axe leaves to
 * review when the element has text (aria-prohibited-attr). The whole document is read, an open dialog with it; `ready`
 * is what must show first (the page's heading unless said).
 */
export async function audit(page: Page, label: string, ready?: Locator): Promise<string[]> {
  await revealed(page);
  await expect(ready ?? page.getByRole("heading", { level: 1 }), label).toBeVisible();
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ content: axe.source });
  const { violations, beside, unnamed } = await page.evaluate(
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
      // A name on an element whose role may not be named (a <code>, a plain <div>) that axe leaves to review because the
      // element has text: the text is read, the name is dropped, so what the element is goes unsaid.
      const unnamed =
        r.incomplete
          .find((v) => v.id === "aria-prohibited-attr")
          ?.nodes.map((n) => `${n.target.join(" ")} (${(n.failureSummary ?? "").split("\n").slice(1).join(" ").trim()})`) ?? [];
      // Elements do not cross back from the browser.
      return { violations: r.violations.map((v) => ({ ...v, nodes: v.nodes.map(({ target, any }) => ({ target, any })) })), beside: short, unnamed };
    },
    [TAGS],
  );
  return [
    ...violations
      .filter((v) => FAILING_IMPACTS.has(v.impact ?? ""))
      .map((v) => `${label}: ${v.id} (${v.impact}, ${v.help}) × ${v.nodes.length}: ${v.nodes.map((n) => n.target.join(" ")).join(" | ")}`),
    ...(beside.length ? [`${label}: color-contrast (serious, text beside an image, measured by this spec) × ${beside.length}: ${beside.join(" | ")}`] : []),
    ...(unnamed.length
      ? [`${label}: aria-prohibited-attr (serious, a name its role may not have, which assistive technology drops) × ${unnamed.length}: ${unnamed.join(" | ")}`]
      : []),
  ];
}
