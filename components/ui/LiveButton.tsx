"use client";
// A button that is disabled until React has hydrated the page. Before that its
// onClick is not attached yet, so a click on the server-rendered button would
// be lost without a sign: a person sees nothing happen, a browser test waits
// for a form that never opens. Disabled, it says "not yet", and the click
// (a person's retry or Playwright's actionability wait) lands once it is live.
import type { ButtonHTMLAttributes } from "react";
import { useHydrated } from "./time";

export function LiveButton({ disabled, type = "button", ...props }: ButtonHTMLAttributes<HTMLButtonElement>) {
  const hydrated = useHydrated();
  return <button type={type} disabled={!hydrated || disabled} {...props} />;
}
