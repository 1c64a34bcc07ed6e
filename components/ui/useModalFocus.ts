"use client";
// What a modal dialog owes a keyboard or screen-reader user: focus moves into it when it opens, Tab and Shift+Tab
// go round its own controls instead of wandering onto the page behind it (which aria-modal tells a screen reader
// is not there), Escape closes it, and on closing focus returns to what opened it, not to the top of the page.
import { useEffect, useRef, type RefObject } from "react";

const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]):not([type="hidden"]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/**
 * `dialog`: the element with role="dialog"; `onClose`: what Escape does; `initial`: what to focus first (else its first
 * control); `fallback`: where focus goes on closing when the opener has left the page (a resolve that emptied its row).
 */
export function useModalFocus(
  dialog: RefObject<HTMLElement | null>,
  onClose: () => void,
  initial?: () => HTMLElement | null | undefined,
  fallback?: () => HTMLElement | null | undefined,
) {
  // The latest callbacks without re-running the effect (which would move focus back to the first field) on each render.
  const close = useRef(onClose);
  const first = useRef(initial);
  const instead = useRef(fallback);
  useEffect(() => {
    close.current = onClose;
    first.current = initial;
    instead.current = fallback;
  }, [onClose, initial, fallback]);

  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const box = dialog.current;
    const controls = () => (box ? [...box.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => el.offsetParent !== null || el === document.activeElement) : []);
    (first.current?.() ?? controls()[0])?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.preventDefault();
        close.current();
        return;
      }
      if (e.key !== "Tab" || !box) return;
      const all = controls();
      if (all.length === 0) {
        e.preventDefault();
        return;
      }
      const first = all[0];
      const last = all[all.length - 1];
      const inside = box.contains(document.activeElement);
      if (e.shiftKey && (document.activeElement === first || !inside)) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && (document.activeElement === last || !inside)) {
        e.preventDefault();
        first.focus();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => {
      window.removeEventListener("keydown", onKey);
      // Back to the button that opened it, if it is still on the page (a dialog that ends in navigation leaves none).
      if (opener?.isConnected) opener.focus();
      else instead.current?.()?.focus();
    };
  }, [dialog]);
}
