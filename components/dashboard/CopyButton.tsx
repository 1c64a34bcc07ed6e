"use client";
import { useState } from "react";
import { btn } from "@/components/ui/kit";
import { LiveButton } from "@/components/ui/LiveButton";

/** Copies `text`; falls back to selecting a textarea when the clipboard API is unavailable (http origins). */
export function CopyButton({ text, label = "Copy", className }: { text: string; label?: string; className?: string }) {
  const [done, setDone] = useState<"idle" | "ok" | "failed">("idle");
  return (
    <LiveButton
      type="button"
      className={className ?? btn}
      onClick={async () => {
        try {
          if (navigator.clipboard?.writeText) await navigator.clipboard.writeText(text);
          else {
            const ta = document.createElement("textarea");
            ta.value = text;
            document.body.appendChild(ta);
            ta.select();
            document.execCommand("copy");
            ta.remove();
          }
          setDone("ok");
        } catch {
          setDone("failed");
        }
        setTimeout(() => setDone("idle"), 2500);
      }}
    >
      {done === "ok" ? "Copied" : done === "failed" ? "Copy failed" : label}
      <span className="sr-only" aria-live="polite">
        {done === "ok" ? " — copied to the clipboard" : ""}
      </span>
    </LiveButton>
  );
}
