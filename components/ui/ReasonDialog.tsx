"use client";
// The one "why are you doing this?" form: a decision that the audit log keeps
// with a required reason (resend, resolve, archive…). It owns the reason, the
// busy state and the API's refusal: a message about the reason shows under
// that field, any other one under the form, and nothing is closed or changed
// until the server says yes. Inline (a card on the page) or modal (the one
// modal dialog over it, closed by Escape or a click outside).
import { useEffect, useId, useRef, useState } from "react";
import { Modal } from "./Modal";
import { ApiError } from "@/lib/client/api";
import { card } from "./kit";
import { Field, FormActions, FormAlert, REASON_MIN, ReasonInput } from "./form";

/** The message an API refusal gives for one body field (its 400 names the failing fields as `body.<field>`), if any. */
function fieldError(err: unknown, field: string): string | null {
  if (!(err instanceof ApiError) || !Array.isArray(err.details)) return null;
  const hit = (err.details as { path?: string; message?: string }[]).find((d) => d.path === `body.${field}` || d.path?.startsWith(`body.${field}.`));
  return hit ? (hit.message ?? err.message) : null;
}

export type ReasonDialogProps = {
  title: string;
  /** What will happen, said before the reason is asked for. */
  description?: React.ReactNode;
  /** Fields asked for before the reason (a decision, a count). */
  children?: React.ReactNode;
  reasonLabel?: string;
  placeholder?: string;
  submitLabel: string;
  busyLabel?: string;
  /** Extra condition for the submit button (the reason's own length is checked here). */
  canSubmit?: boolean;
  danger?: boolean;
  modal?: boolean;
  /** Shown instead of the form once the action is done (modal dialogs that report a count). */
  result?: React.ReactNode;
  /** The message when the failure is not the API's (network down). */
  failMessage?: string;
  onSubmit: (reason: string) => Promise<void>;
  onCancel: () => void;
  /** Where focus goes on closing when the button that opened the dialog has left the page. */
  returnFocus?: () => HTMLElement | null | undefined;
};

export function ReasonDialog(p: ReasonDialogProps) {
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const ids = useId();
  const { modal } = p;

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await p.onSubmit(reason.trim());
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const reasonError = fieldError(error, "reason");
  const otherError = error && !reasonError ? (error instanceof ApiError ? error.message : (p.failMessage ?? "That failed; nothing was changed. Try again.")) : null;
  const form = (
    <form ref={formRef} onSubmit={submit} className="flex flex-col gap-3" aria-label={modal ? undefined : p.title} noValidate>
      {!modal && <h3 className="text-sm font-semibold text-slate-900">{p.title}</h3>}
      {p.description && <div className="text-sm text-slate-700">{p.description}</div>}
      {p.children}
      <Field label={p.reasonLabel ?? "Reason (required)"} errorId={`${ids}-reason-error`} error={reasonError}>
        <ReasonInput
          value={reason}
          onChange={setReason}
          placeholder={p.placeholder}
          className={reasonError ? "border-red-600" : undefined}
          aria-invalid={reasonError ? true : undefined}
          aria-describedby={reasonError ? `${ids}-reason-error` : undefined}
        />
      </Field>
      <FormAlert>{otherError}</FormAlert>
      <FormActions
        busy={busy}
        busyLabel={p.busyLabel ?? "Working…"}
        submitLabel={p.submitLabel}
        disabled={reason.trim().length < REASON_MIN || p.canSubmit === false}
        danger={p.danger}
        onCancel={p.onCancel}
      />
    </form>
  );

  if (!modal) return <div className={`${card} max-w-md`}>{form}</div>;
  return (
    <Modal title={p.title} onClose={p.onCancel} initialFocus={() => formRef.current?.querySelector<HTMLElement>("input, select, textarea")} returnFocus={p.returnFocus}>
      {p.result ? <Result>{p.result}</Result> : form}
    </Modal>
  );
}

/**
 * The result that replaces the form: the submit button that had focus went with the form, which would leave focus on
 * nothing (the page's body) and a screen reader nowhere. Focus moves to the result's own control (its Close), or to
 * the result itself.
 */
function Result({ children }: { children: React.ReactNode }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    (el?.querySelector<HTMLElement>("button, a[href]") ?? el)?.focus();
  }, []);
  return (
    <div ref={box} tabIndex={-1} className="outline-none">
      {children}
    </div>
  );
}
