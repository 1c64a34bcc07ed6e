"use client";
import { useEffect, useRef } from "react";

/**
 * An inline question (a confirmation on the page, not a modal): it takes the keyboard's focus as it opens, and when it
 * closes without leaving the page (Back, Keep it running, Escape) focus goes back to the button that opened it, so a
 * keyboard user is neither left at the top of the page nor made to hunt. Put `opener` on that button and `question`
 * on the question's element (focusable: tabIndex -1).
 */
export function useQuestionFocus<Q extends HTMLElement>(open: boolean) {
  const opener = useRef<HTMLButtonElement>(null);
  const question = useRef<Q>(null);
  const wasOpen = useRef(false);
  useEffect(() => {
    if (open) question.current?.focus();
    else if (wasOpen.current) opener.current?.focus();
    wasOpen.current = open;
  }, [open]);
  return { opener, question };
}
