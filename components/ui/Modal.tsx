"use client";
// The dashboard's one modal dialog: the browser's own <dialog>, opened with showModal(). The browser then makes the
// rest of the page inert (no click, focus or screen-reader visit reaches it: the accessibility tree holds the dialog
// alone), keeps Tab among the dialog's controls and its own toolbar, and turns Escape into a `cancel` event. What is
// left to do here: which field has focus first, where focus goes back on closing, and a click on the backdrop.
//
// It is open while it is rendered: its owner closes it by no longer rendering it (`onClose` asks for that).
import { useId, useLayoutEffect, useRef } from "react";

/**
 * `onClose`: what Escape, a click on the backdrop or the browser closing the dialog ask for (the owner stops rendering
 * it). `dismissible` false while something would be lost by closing (a secret shown once): Escape and the backdrop do
 * nothing, and the dialog's own buttons are the way out. `initialFocus`: what to focus first (else the browser focuses
 * the dialog's first control). `returnFocus`: where focus goes on closing when the control that opened it has left the
 * page (a resolve that emptied its row).
 */
/**
 * The opener can leave the page a moment after the dialog closed, with what the dialog changed (a refetch that
 * finished after the close removes the "Resolve these" button it resolved). The browser then leaves focus on the
 * page's body; `returnFocus` gets it instead, unless the reader has moved on. Watched for a while, not for good.
 */
function followOpener(opener: HTMLElement, returnFocus: () => HTMLElement | null | undefined) {
  const watch = new MutationObserver(() => {
    if (opener.isConnected) return;
    stop();
    if (!document.activeElement || document.activeElement === document.body) returnFocus()?.focus();
  });
  const timer = setTimeout(() => stop(), 30_000);
  const stop = () => {
    clearTimeout(timer);
    watch.disconnect();
  };
  watch.observe(document.body, { childList: true, subtree: true });
}

export function Modal({
  title,
  onClose,
  dismissible = true,
  wide = false,
  initialFocus,
  returnFocus,
  children,
}: {
  title: React.ReactNode;
  onClose: () => void;
  dismissible?: boolean;
  /** A form of many fields (max-w-2xl) rather than a question (max-w-md). */
  wide?: boolean;
  initialFocus?: () => HTMLElement | null | undefined;
  returnFocus?: () => HTMLElement | null | undefined;
  children: React.ReactNode;
}) {
  const ids = useId();
  const ref = useRef<HTMLDialogElement>(null);
  // The latest props for the listeners, which are added once: re-adding them would reopen the dialog and move focus.
  const latest = useRef({ onClose, dismissible, initialFocus, returnFocus });
  useLayoutEffect(() => {
    latest.current = { onClose, dismissible, initialFocus, returnFocus };
  });

  // A layout effect: the dialog is open (and the page behind inert) before the browser paints, and its clean-up runs
  // while the dialog is still in the document, so focus goes straight back instead of through the page's body.
  useLayoutEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    let closing = false;
    let pressedBackdrop = false;
    const outside = (e: MouseEvent) => {
      if (e.target !== dialog) return false;
      const r = dialog.getBoundingClientRect();
      return e.clientX < r.left || e.clientX > r.right || e.clientY < r.top || e.clientY > r.bottom;
    };
    // Escape (and a phone's back gesture). Always refused here, so that the dialog closes only when its owner stops
    // rendering it; Chromium stops letting a page refuse a second one in a row, which `onNativeClose` covers.
    const onCancel = (e: Event) => {
      e.preventDefault();
      if (latest.current.dismissible) latest.current.onClose();
    };
    // Escape's keydown refused is no close request at all, however many in a row: how a shown-once secret stays.
    const onKeyDown = (e: KeyboardEvent) => {
      if (e.key === "Escape" && !latest.current.dismissible) e.preventDefault();
    };
    // A close the page could not refuse: the owner closes too, or, if nothing may be lost, the dialog opens again.
    const onNativeClose = () => {
      if (closing) return;
      if (latest.current.dismissible) latest.current.onClose();
      else if (dialog.isConnected) dialog.showModal();
    };
    // A press and release both on the backdrop (the dialog's own box is its panel): not a text selection dragged out.
    const onPointerDown = (e: PointerEvent) => {
      pressedBackdrop = outside(e);
    };
    const onClick = (e: MouseEvent) => {
      if (pressedBackdrop && outside(e) && latest.current.dismissible) latest.current.onClose();
      pressedBackdrop = false;
    };
    // One signal removes them all on clean-up.
    const listening = new AbortController();
    const { signal } = listening;
    dialog.addEventListener("cancel", onCancel, { signal });
    dialog.addEventListener("keydown", onKeyDown, { signal });
    dialog.addEventListener("close", onNativeClose, { signal });
    dialog.addEventListener("pointerdown", onPointerDown, { signal });
    dialog.addEventListener("click", onClick, { signal });
    dialog.showModal();
    latest.current.initialFocus?.()?.focus();
    return () => {
      closing = true;
      listening.abort();
      dialog.close();
      // Back to the control that opened it, if it is still on the page (a dialog that ends in navigation leaves none).
      if (opener?.isConnected) {
        opener.focus();
        if (latest.current.returnFocus) followOpener(opener, latest.current.returnFocus);
      } else latest.current.returnFocus?.()?.focus();
    };
  }, []);

  return (
    <dialog
      ref={ref}
      aria-labelledby={`${ids}-title`}
      className={`m-auto max-h-[calc(100dvh-1rem)] w-[calc(100%-1rem)] overflow-y-auto overscroll-contain rounded-lg bg-white p-4 text-left text-slate-900 shadow-xl backdrop:bg-slate-900/40 sm:max-h-[calc(100dvh-2rem)] sm:w-[calc(100%-2rem)] sm:p-5 ${wide ? "max-w-2xl" : "max-w-md"}`}
    >
      <h2 id={`${ids}-title`} className="mb-3 text-lg font-semibold text-slate-900">
        {title}
      </h2>
      {children}
    </dialog>
  );
}
