"use client";
// A button that is disabled until React has hydrated the page. Before that its
// onClick is not attached yet, so a click on the server-rendered button would
// be lost without a sign: a person sees nothing happen, a browser test waits
// for a form that never opens. Disabled, it says "not yet", and the click
// (a person's retry or Playwright's actionability wait) lands once it is live.
import type { ComponentProps, FieldsetHTMLAttributes } from "react";
import { useHydrated } from "./time";

export function LiveButton({ disabled, type = "button", ...props }: ComponentProps<"button">) {
  const hydrated = useHydrated();
  return <button type={type} disabled={!hydrated || disabled} {...props} />;
}

/**
 * The same for a form's fields: every control inside is disabled until React has hydrated the page. A controlled
 * field changed before that is set back by hydration, and a form submitted then goes to the browser's own GET with
 * its fields in the address. Laid out as if absent (display: contents).
 */
export function LiveFieldset({ disabled, className = "contents", ...props }: FieldsetHTMLAttributes<HTMLFieldSetElement>) {
  const hydrated = useHydrated();
  return <fieldset disabled={!hydrated || disabled} className={className} {...props} />;
}

/**
 * A form's submit button while its request runs: aria-disabled (announced and dimmed), not disabled, since disabling
 * the button that has focus makes the browser drop focus to the top of the page, where Tab starts over and the
 * answer shown next is far from the keyboard. A press while busy does nothing. Disabled until hydrated, as LiveButton.
 */
export function BusySubmit({ busy, onClick, className = "", ...props }: ComponentProps<"button"> & { busy: boolean }) {
  return (
    <LiveButton
      type="submit"
      {...props}
      className={`${className} aria-disabled:opacity-50`}
      aria-disabled={busy || undefined}
      onClick={(e) => {
        if (busy) e.preventDefault();
        else onClick?.(e);
      }}
    />
  );
}
