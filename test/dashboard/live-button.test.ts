// The server-rendered HTML of a LiveButton is disabled: before hydration its
// onClick does nothing, so a click there must not look accepted. (A browser
// test clicking a plain button this early lost the click and waited for a form
// that never opened.)
import { describe, expect, it } from "vitest";
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { LiveButton } from "@/components/ui/LiveButton";

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
});
