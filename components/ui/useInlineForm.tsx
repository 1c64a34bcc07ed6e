"use client";
// An inline form that a button opens in place and that its own Save or Cancel closes. Closing it removes the control
// that had focus (the Save just pressed), so the browser drops focus to the top of the page and the next Tab starts
// over; and a save that only makes the form disappear tells a screen-reader user nothing. This keeps which button
// opened the form, gives focus back to it once it is on the page again, and holds a polite status line for what was
// saved (mounted from the start: a live region added together with its words is often not read).
import { useCallback, useEffect, useRef, useState } from "react";

export function useInlineForm<K extends string = "form">() {
  const [open, setOpen] = useState<K | null>(null);
  const [status, setStatus] = useState("");
  const openers = useRef(new Map<K, HTMLElement>());
  const giveBack = useRef<K | null>(null);
  const [closes, setCloses] = useState(0);

  useEffect(() => {
    if (open !== null || giveBack.current === null) return;
    openers.current.get(giveBack.current)?.focus();
    giveBack.current = null;
  }, [open, closes]);

  /** A ref for the button that opens form `key`, so focus can return to it. */
  const opener = useCallback(
    (key: K) => (el: HTMLElement | null) => {
      if (el) openers.current.set(key, el);
      else openers.current.delete(key);
    },
    [],
  );
  const start = useCallback((key: K) => {
    setStatus("");
    setOpen(key);
  }, []);
  /**
   * Close the open form; `saved` is the status to read ("Saved: …"), none for a cancel. `key`: the button to focus
   * when no form was open (an action without a form, such as a removal, whose own button has gone).
   */
  const close = useCallback(
    (saved?: string, key?: K) => {
      giveBack.current = key ?? open;
      setStatus(saved ?? "");
      setOpen(null);
      setCloses((n) => n + 1);
    },
    [open],
  );
  return { open, start, close, opener, status };
}

/**
 * A form's status line (`useInlineForm`'s, and every form that stays open after a save): always in the page, out of
 * sight while empty. A live region put into the page together with its text is not reliably read out; one that is
 * there first and then filled is.
 */
export function SavedStatus({ children, className = "" }: { children: React.ReactNode; className?: string }) {
  return (
    <div role="status" aria-live="polite" className={`text-sm text-emerald-800 empty:sr-only ${className}`}>
      {children}
    </div>
  );
}
