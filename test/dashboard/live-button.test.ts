// The server-rendered HTML of a LiveButton is disabled: before hydration its
// onClick does nothing, so a click there must not look accepted. (A browser
// test clicking a plain button this early lost the click and waited for a form
// that never opened.)
import { describe, expect, it } from "vitest";
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { LiveButton } from "@/components/ui/LiveButton";
import { ErrorState, SegmentedControl } from "@/components/ui/kit";
import { CopyButton } from "@/components/dashboard/CopyButton";
import { SignOutButton } from "@/app/(auth)/sign-out-button";

describe("LiveButton", () => {
  it("is disabled in the server render, whatever the caller passes", () => {
    const html = renderToString(createElement(LiveButton, { onClick: () => {} }, "Recover or backfill…"));
    expect(html).toMatch(/^<button type="button" disabled=""/);
    const enabled = renderToString(createElement(LiveButton, { disabled: false }, "Resume"));
    expect(enabled).toContain('disabled=""');
  });
  it("keeps a caller's type", () => {
    expect(renderToString(createElement(LiveButton, { type: "submit" }, "Save"))).toContain('type="submit"');
  });
  it("the buttons a page shows on its first paint are LiveButtons: the range picker, Try again, Copy, Sign out", () => {
    const pieces = [
      createElement(SegmentedControl<string>, { options: [{ value: "1h", label: "1 h" }], value: "1h", onChange: () => {}, label: "Range" }),
      createElement(ErrorState, { error: new Error("down"), retry: () => {} }),
      createElement(CopyButton, { text: "evt_1" }),
      createElement(SignOutButton, {}),
    ];
    for (const p of pieces) {
      const buttons = renderToString(p).match(/<button[^>]*>/g) ?? [];
      expect(buttons.length).toBeGreaterThan(0);
      for (const b of buttons) expect(b).toContain('disabled=""');
    }
  });
});
