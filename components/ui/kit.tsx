// The dashboard's one UI kit: class names for buttons, inputs, labels and
// cards, and the small shared pieces (cards, state badges, empty and error
// states, stats). Every page and component takes its look from here.
import Link from "next/link";
import { ATTEMPT_OUTCOME_LABELS, DELIVERY_STATE_LABELS, SUBSCRIPTION_STATE_LABELS, labelOf } from "./labels";
import { LiveButton } from "./LiveButton";
import type { BatchStatus } from "@/lib/ledger/states";

export function Card({
  title,
  children,
  className,
  actions,
  id,
}: {
  title?: React.ReactNode;
  children: React.ReactNode;
  className?: string;
  actions?: React.ReactNode;
  id?: string;
}) {
  return (
    <section aria-labelledby={id} className={`${card} ${className ?? ""}`}>
      {(title || actions) && (
        <div className="mb-3 flex flex-wrap items-center justify-between gap-2">
          {title && (
            <h2 id={id} className="text-base font-semibold text-slate-900">
              {title}
            </h2>
          )}
          {actions}
        </div>
      )}
      {children}
    </section>
  );
}

const STATE_STYLE: Record<string, string> = {
  delivered: "bg-emerald-100 text-emerald-900 ring-emerald-300",
  scheduled: "bg-amber-100 text-amber-900 ring-amber-300",
  in_flight: "bg-sky-100 text-sky-900 ring-sky-300",
  pending: "bg-slate-100 text-slate-800 ring-slate-300",
  dead_letter: "bg-red-100 text-red-900 ring-red-300",
  resolved: "bg-violet-100 text-violet-900 ring-violet-300",
  active: "bg-emerald-100 text-emerald-900 ring-emerald-300",
  paused: "bg-amber-100 text-amber-900 ring-amber-300",
  paused_failing: "bg-red-100 text-red-900 ring-red-300",
  disabled: "bg-red-100 text-red-900 ring-red-300",
  retry: "bg-amber-100 text-amber-900 ring-amber-300",
  abandoned: "bg-slate-100 text-slate-800 ring-slate-300",
};
/** One legend for delivery states, subscription states and attempt outcomes (their names do not collide in meaning). */
const BADGE_LABELS: Record<string, string> = {
  ...ATTEMPT_OUTCOME_LABELS,
  ...SUBSCRIPTION_STATE_LABELS,
  ...DELIVERY_STATE_LABELS,
  // Not a state of its own: a subscription the failure window paused (probed, resumes by itself), apart from an operator's pause.
  paused_failing: "Paused (failing)",
};

export function StateBadge({ state }: { state: string }) {
  return (
    <span
      className={`inline-flex items-center rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${STATE_STYLE[state] ?? "bg-slate-100 text-slate-800 ring-slate-300"}`}
    >
      {labelOf(BADGE_LABELS, state)}
    </span>
  );
}

/** A subscription's state, telling the failure window's pause (probed, resumes by itself) from an operator's. */
export function SubscriptionStateBadge({ s }: { s: { state: string; pausedReason: string | null } }) {
  return <StateBadge state={s.state === "paused" && s.pausedReason === "failing" ? "paused_failing" : s.state} />;
}

/** A page's title, what the page is for, and its actions on the right (a "New …" button, the refresh time). */
export function PageHeader({ title, description, actions }: { title: React.ReactNode; description?: React.ReactNode; actions?: React.ReactNode }) {
  return (
    <div className="flex flex-wrap items-end justify-between gap-3">
      <div className="min-w-0">
        <h1 className="text-2xl font-semibold text-slate-900">{title}</h1>
        {description && <p className="mt-1 max-w-3xl text-sm text-slate-600">{description}</p>}
      </div>
      {actions}
    </div>
  );
}

/** A column of a DataTable: its heading, right-aligned (numbers), or read by screen readers only (an actions column). */
export type Column = string | { label: React.ReactNode; right?: boolean; srOnly?: boolean };

const TABLE_LOOK = {
  /** Admin lists: a bare table on the page. */
  plain: { wrap: "", head: "text-slate-500", th: "py-2 pr-3" },
  /** A list that is the page's subject: a bordered card with a shaded heading row. */
  boxed: { wrap: "rounded-lg border border-slate-200 bg-white shadow-sm", head: "bg-slate-50 text-slate-600", th: "px-3 py-2 font-medium" },
  /** A table inside a card: tight rows. */
  compact: { wrap: "", head: "text-slate-600", th: "py-1 font-medium" },
};

/**
 * A table that scrolls sideways inside its own box when it is wider than the
 * screen, instead of widening the page (relative: an sr-only heading is placed
 * absolutely and would otherwise escape the scroller). The rows are children.
 *
 * `stacked`: below the sm breakpoint the table is a list of cards instead (no
 * heading row; each row a block). Its rows and cells then say what they are on
 * a phone themselves: `stackedRow` and `stackedCell` give them the classes.
 */
export function DataTable({
  columns,
  look = "plain",
  caption,
  className,
  tableClassName,
  stacked = false,
  children,
}: {
  columns: Column[];
  look?: keyof typeof TABLE_LOOK;
  caption?: React.ReactNode;
  className?: string;
  tableClassName?: string;
  stacked?: boolean;
  children: React.ReactNode;
}) {
  const l = TABLE_LOOK[look];
  return (
    <div className={`relative ${stacked ? "sm:overflow-x-auto" : "overflow-x-auto"} ${l.wrap} ${className ?? ""}`}>
      <table className={`w-full text-left text-sm ${stacked ? "block sm:table" : ""} ${tableClassName ?? ""}`}>
        {caption}
        <thead className={`${l.head} ${stacked ? "hidden sm:table-header-group" : ""}`}>
          <tr>
            {columns.map((c, i) => {
              const col = typeof c === "string" ? { label: c } : c;
              // pl-4: a right-aligned heading keeps its distance from the one before ("Depth Oldest", not "DepthOldest").
              return (
                <th key={i} scope="col" className={`${l.th} ${col.right ? "pl-4 text-right" : ""}`}>
                  {col.srOnly ? <span className="sr-only">{col.label}</span> : col.label}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody className={stacked ? "block sm:table-row-group" : undefined}>{children}</tbody>
      </table>
    </div>
  );
}

/** A row of a stacked DataTable: a card below sm, a table row above. */
export const stackedRow = "block py-2 sm:table-row sm:py-0";
/** A cell of a stacked DataTable: a line of the card below sm (inline: several share a line), a table cell above. */
export function stackedCell(inline = false): string {
  return `${inline ? "inline-block mr-4" : "block"} sm:mr-0 sm:table-cell`;
}

export function EmptyState({ title, children }: { title: string; children?: React.ReactNode }) {
  return (
    <div className="rounded-lg border border-dashed border-slate-300 bg-white px-4 py-8 text-center">
      <p className="font-medium text-slate-800 wrap-anywhere">{title}</p>
      {children && <div className="mt-1 text-sm text-slate-600">{children}</div>}
    </div>
  );
}

export function ErrorState({ error, retry }: { error: unknown; retry?: () => void }) {
  return (
    <div role="alert" className="rounded-lg border border-red-300 bg-red-50 px-4 py-3 text-sm text-red-900">
      <p className="font-medium">This could not be loaded.</p>
      <p className="mt-1">{(error as Error)?.message ?? String(error)}</p>
      {retry && (
        <LiveButton
          type="button"
          onClick={retry}
          className="mt-2 rounded border border-red-300 bg-white px-2 py-1 text-red-900 hover:bg-red-100 focus:outline-none focus-visible:ring-2 focus-visible:ring-red-500"
        >
          Try again
        </LiveButton>
      )}
    </div>
  );
}

export function Skeleton({ lines = 3 }: { lines?: number }) {
  return (
    <div className="animate-pulse space-y-2" aria-hidden>
      {Array.from({ length: lines }, (_, i) => (
        <div key={i} className="h-4 rounded bg-slate-200" style={{ width: `${90 - i * 12}%` }} />
      ))}
    </div>
  );
}

export function Stat({ label, value, hint }: { label: string; value: React.ReactNode; hint?: React.ReactNode }) {
  return (
    <div className="min-w-0">
      <dt className="text-xs font-medium uppercase tracking-wide text-slate-600">{label}</dt>
      <dd className="mt-0.5 text-xl font-semibold text-slate-900">{value}</dd>
      {hint && <dd className="text-xs text-slate-600">{hint}</dd>}
    </div>
  );
}

export function SubLink({ id, name }: { id: string; name: string | null }) {
  return (
    // A name is anyone's text, sometimes one long word: it breaks rather than push its card off a phone's screen.
    <Link href={`/subscriptions/${encodeURIComponent(id)}`} className="font-medium text-blue-700 wrap-anywhere hover:underline">
      {name ?? id}
    </Link>
  );
}

/**
 * A link inside a sentence: underlined, since its colour alone does not tell it from the words around it (WCAG 1.4.1:
 * blue-700 against the slate text is nearer 1:1 than the 3:1 that would do). A link that stands alone (a table's cell,
 * a card's name) is plainly a link there and keeps the underline for hover.
 */
export const textLink = "text-blue-700 underline underline-offset-2 hover:text-blue-900";

export const btn =
  "inline-flex items-center justify-center gap-1 rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm font-medium text-slate-800 shadow-sm hover:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-blue-600 disabled:opacity-50";
export const btnPrimary =
  "inline-flex items-center justify-center gap-1 rounded-md bg-blue-700 px-3 py-1.5 text-sm font-medium text-white shadow-sm hover:bg-blue-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-blue-600 focus-visible:ring-offset-2 disabled:opacity-50";
/** A button of a segmented control (time ranges); the active one is dark. */
function segBtn(active: boolean): string {
  return `inline-flex items-center justify-center rounded-md border px-2 py-1 text-sm font-medium shadow-sm focus:outline-none focus-visible:ring-2 focus-visible:ring-blue-600 ${
    active ? "border-slate-900 bg-slate-900 text-white" : "border-slate-300 bg-white text-slate-800 hover:bg-slate-50"
  }`;
}

/** A row of buttons choosing one of a few values (a chart's time range); the chosen one is pressed. */
export function SegmentedControl<T extends string | number>({
  options,
  value,
  onChange,
  label,
}: {
  options: readonly { value: T; label: string }[];
  value: T;
  onChange: (v: T) => void;
  label: string;
}) {
  return (
    <div role="group" aria-label={label} className="flex gap-1">
      {options.map((o) => (
        <LiveButton key={o.value} type="button" aria-pressed={value === o.value} className={segBtn(value === o.value)} onClick={() => onChange(o.value)}>
          {o.label}
        </LiveButton>
      ))}
    </div>
  );
}

export const btnDanger =
  "inline-flex items-center justify-center gap-1 rounded-md bg-red-700 px-3 py-1.5 text-sm font-medium text-white shadow-sm hover:bg-red-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-red-600 focus-visible:ring-offset-2 disabled:opacity-50";
/** min-w-0: a card in a grid or flex row may be narrower than its widest content (a long option), which then fits or scrolls inside it. */
export const card = "min-w-0 rounded-lg border border-slate-200 bg-white p-4 shadow-sm";
export const label = "flex flex-col gap-1 text-sm font-medium text-slate-800";

/** Redrive batch statuses (a status without a style is a type error). */
export const STATUS_STYLE: Record<string, string> = {
  running: "bg-sky-100 text-sky-900 ring-sky-300",
  done: "bg-emerald-100 text-emerald-900 ring-emerald-300",
  cancelled: "bg-amber-100 text-amber-900 ring-amber-300",
} satisfies Record<BatchStatus, string>;

/** min-w-0 max-w-full: a select is as wide as its longest option; capped, it fits a phone's column (the text is cut, the list shows it whole). */
export const input =
  "min-w-0 max-w-full rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm text-slate-900 shadow-sm focus:border-blue-600 focus:outline-none focus:ring-2 focus:ring-blue-600/30";

export function pct(x: number | null): string {
  return x === null ? "—" : `${(x * 100).toFixed(x >= 0.995 || x === 0 ? 0 : 1)}%`;
}
export function ms(x: number | null): string {
  return x === null ? "—" : x >= 1000 ? `${(x / 1000).toFixed(1)} s` : `${x} ms`;
}
