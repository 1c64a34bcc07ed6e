// The pieces every dashboard form is built from, so that a field, its error,
// a choice list and the submit/cancel row look and behave the same on every
// page: a field's label holds its input (the label names it for screen readers
// and tests), the API's message for that field shows under it, and the submit
// button says what is happening while the request runs.
import type { SelectHTMLAttributes } from "react";
import { btn, btnDanger, btnPrimary, input, label as labelClass } from "./kit";
import { ZoneLabel } from "./time";
import { BusySubmit } from "./LiveButton";

/** The API's message for one field, under it; nothing when there is none. */
export function FieldError({ id, message }: { id: string; message?: string | null }) {
  if (!message) return null;
  return (
    <span id={id} role="alert" className="text-sm font-normal text-red-700">
      {message}
    </span>
  );
}

/** A labelled field: the label text, the control (children), an optional hint and the field's error. */
export function Field({
  label,
  hint,
  error,
  errorId,
  className,
  children,
}: {
  label: React.ReactNode;
  hint?: React.ReactNode;
  error?: string | null;
  errorId?: string;
  className?: string;
  children: React.ReactNode;
}) {
  return (
    <label className={className ? `${labelClass} ${className}` : labelClass}>
      <span>{label}</span>
      {children}
      {hint && <span className="text-xs font-normal text-slate-600">{hint}</span>}
      {errorId && <FieldError id={errorId} message={error} />}
    </label>
  );
}

type Option = { value: string | number; label: string };

/** A select over a list of options, with an optional first "any" choice whose value is "". */
export function OptionSelect({
  options,
  any,
  className,
  ...props
}: Omit<SelectHTMLAttributes<HTMLSelectElement>, "children"> & { options: readonly Option[]; any?: string }) {
  return (
    <select className={className ? `${input} ${className}` : input} {...props}>
      {any !== undefined && <option value="">{any}</option>}
      {options.map((o) => (
        <option key={o.value} value={o.value}>
          {o.label}
        </option>
      ))}
    </select>
  );
}

/** A message about the whole form (not one field): a refusal, a network failure. */
export function FormAlert({ children, className }: { children: React.ReactNode; className?: string }) {
  if (!children) return null;
  return (
    <p role="alert" className={`text-sm text-red-700 ${className ?? ""}`}>
      {children}
    </p>
  );
}

/** The operator's reason for an audited action: required, 3 to 500 characters (the API's own limits). */
export const REASON_MIN = 3;
const REASON_MAX = 500;

export function ReasonInput({
  value,
  onChange,
  placeholder,
  className,
  ...aria
}: {
  value: string;
  onChange: (v: string) => void;
  placeholder?: string;
  className?: string;
  "aria-invalid"?: boolean;
  "aria-describedby"?: string;
}) {
  return (
    <input
      className={className ? `${input} ${className}` : input}
      value={value}
      onChange={(e) => onChange(e.target.value)}
      required
      minLength={REASON_MIN}
      maxLength={REASON_MAX}
      placeholder={placeholder}
      {...aria}
    />
  );
}

/**
 * The submit and cancel buttons at the foot of a form. The submit button is
 * disabled while `busy` (and says `busyLabel`) or while `disabled`; `children`
 * go before it (an "Add another" button).
 */
export function FormActions({
  busy,
  submitLabel,
  busyLabel = "Saving…",
  disabled,
  danger,
  onCancel,
  cancelLabel = "Cancel",
  className,
  children,
}: {
  busy: boolean;
  submitLabel: React.ReactNode;
  busyLabel?: string;
  disabled?: boolean;
  danger?: boolean;
  onCancel: () => void;
  cancelLabel?: string;
  className?: string;
  children?: React.ReactNode;
}) {
  return (
    <div className={`flex flex-wrap gap-2 ${className ?? ""}`}>
      {children}
      <BusySubmit busy={busy} className={danger ? btnDanger : btnPrimary} disabled={disabled}>
        {busy ? busyLabel : submitLabel}
      </BusySubmit>
      <button type="button" className={btn} onClick={onCancel}>
        {cancelLabel}
      </button>
    </div>
  );
}

/** A date and time in the viewer's zone (named in the label), as a datetime-local input's text. */
export function TimeField({
  label,
  note,
  value,
  onChange,
  required,
}: {
  label: string;
  /** After the zone, inside the brackets: "empty: now". */
  note?: string;
  value: string;
  onChange: (v: string) => void;
  required?: boolean;
}) {
  return (
    <Field
      label={
        <>
          {label} (<ZoneLabel />
          {note ? `; ${note}` : ""})
        </>
      }
    >
      <input type="datetime-local" className={input} value={value} onChange={(e) => onChange(e.target.value)} required={required} />
    </Field>
  );
}
