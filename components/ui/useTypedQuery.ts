"use client";
import { useEffect, useState } from "react";

/** How long a field's suggestions wait after the last keystroke before they ask the server. */
const TYPING_PAUSE_MS = 250;

/** What was typed, trimmed, once typing has paused: what a field's suggestions ask the server for, not each keystroke. */
export function useTypedQuery(text: string): string {
  const [q, setQ] = useState(text.trim());
  useEffect(() => {
    const t = setTimeout(() => setQ(text.trim()), TYPING_PAUSE_MS);
    return () => clearTimeout(t);
  }, [text]);
  return q;
}
