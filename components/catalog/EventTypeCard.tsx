// One catalogued event type as a district reads it: what it means, its fields (from the JSON Schema, with the raw
// schema folded away), an example, the viewer's subscriptions that take it, and the exact signed request its
// endpoint would receive for the example, to test a signature verifier with.
import Link from "next/link";
import type { EventTypeView } from "@/lib/catalog/manage-event-types";
import type { SchemaField } from "@/lib/catalog/schema-fields";
import { Card, DataTable, stackedCell, stackedRow, textLink } from "@/components/ui/kit";
import { CopyButton } from "@/components/dashboard/CopyButton";
import { count, num } from "@/lib/words";

const pre = "mt-1 max-w-full overflow-x-auto whitespace-pre-wrap break-all rounded-md bg-slate-50 p-2 font-mono text-xs text-slate-800 ring-1 ring-slate-200";

function FieldTable({ fields }: { fields: SchemaField[] }) {
  return (
    <DataTable stacked columns={["Field", "Type", "Required", "Description"]} className="mt-1">
      {fields.map((f) => (
        <tr key={f.name} className={`${stackedRow} border-t border-slate-200`} data-testid="schema-field">
          <td className={`${stackedCell(true)} py-1 pr-3 font-mono text-xs break-all`}>{f.name}</td>
          <td className={`${stackedCell(true)} py-1 pr-3 text-xs`}>{f.type}</td>
          <td className={`${stackedCell(true)} py-1 pr-3 text-xs`}>{f.required ? "required" : "optional"}</td>
          <td className={`${stackedCell()} py-1 text-xs text-slate-700`}>{f.description ?? ""}</td>
        </tr>
      ))}
    </DataTable>
  );
}

/** How a district's viewer reads the card: whether it may add the type to one of its subscriptions itself. */
type DistrictView = { canSubscribe: boolean };

function Subscriptions({ subs, total, district }: { subs: EventTypeView["subscriptions"]; total: number; district?: DistrictView }) {
  if (subs.length === 0)
    return (
      <p className="text-sm text-slate-600" data-testid="catalog-subscriptions-none">
        {district
          ? `None of your subscriptions receive it.${district.canSubscribe ? " To receive it, add it to a subscription's event types (Edit configuration on the subscription's page)." : ""}`
          : "None of your subscriptions take this type."}
      </p>
    );
  return (
    <>
      {total > subs.length && (
        <p className="text-sm text-slate-700" data-testid="catalog-subscriptions-more">
          {count(total, "subscription")} {district ? "receive it" : "take this type"}; the first {num(subs.length)} by name:
        </p>
      )}
      <ul className="flex flex-wrap gap-2 text-sm">
        {subs.map((s) => (
          <li key={s.id}>
            <Link href={`/subscriptions/${encodeURIComponent(s.id)}`} className={textLink}>
              {s.name}
            </Link>
            {s.state !== "active" && (
              <span className="ml-1 text-xs text-slate-600">({district && s.state === "paused" ? "paused: held until you resume it" : s.state})</span>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}

export type SignedExampleView = { text: string; secret: string; headers: [string, string][]; body: string };

function SignedRequest({ signed }: { signed: SignedExampleView }) {
  return (
    <details className="mt-1" data-testid="signed-example">
      <summary className="cursor-pointer text-sm font-medium text-slate-800">Signed example request (test your verifier)</summary>
      <p className="mt-1 text-xs text-slate-700">
        What your endpoint receives for the example above, signed now as hookledger signs every delivery (Standard Webhooks), with this example secret. It is public and
        signs only these examples, never a real delivery; verify within five minutes of opening this page (verifiers refuse older timestamps).
      </p>
      <p className="mt-1 text-xs">
        <span className="font-medium">Example secret:</span>{" "}
        <code className="break-all font-mono" data-testid="example-secret">
          {signed.secret}
        </code>
      </p>
      <pre className={pre} data-testid="signed-request">
        {signed.text}
      </pre>
      <div className="mt-1 flex flex-wrap gap-2">
        <CopyButton text={signed.text} label="Copy request" />
        <CopyButton text={signed.body} label="Copy body" />
      </div>
    </details>
  );
}

/** `district`: the viewer is a district (its own account or its portal), which reads the card in its own words. */
export function EventTypeCard({
  t,
  fields,
  signed,
  editor,
  district,
}: {
  t: EventTypeView;
  fields: SchemaField[];
  signed: SignedExampleView | null;
  editor?: React.ReactNode;
  district?: DistrictView;
}) {
  const id = `type-${t.type.replace(/[^a-z0-9]/g, "-")}`;
  return (
    <Card
      id={id}
      title={
        <span className="flex flex-wrap items-center gap-2">
          <code className="break-all font-mono">{t.type}</code>
          {t.deprecated && (
            <span className="rounded-full bg-amber-100 px-2 py-0.5 text-xs font-medium text-amber-900 ring-1 ring-amber-300 ring-inset" data-testid="deprecated">
              Deprecated
            </span>
          )}
        </span>
      }
      actions={editor}
    >
      <div className="space-y-3" data-testid="event-type" data-type={t.type}>
        {district && <h3 className="text-sm font-semibold text-slate-900">What it is and when it is sent</h3>}
        <p className="text-sm text-slate-800">{t.description}</p>
        <div>
          <h3 className="text-sm font-semibold text-slate-900">Fields of data</h3>
          {t.schema === null ? (
            <p className="text-sm text-slate-600">No schema: any data is accepted.</p>
          ) : fields.length === 0 ? (
            <p className="text-sm text-slate-600">The schema names no fields; see the raw schema.</p>
          ) : (
            <FieldTable fields={fields} />
          )}
          {t.schema !== null && (
            <details className="mt-1">
              <summary className="cursor-pointer text-sm text-slate-700">Raw JSON Schema</summary>
              <pre className={pre}>{JSON.stringify(t.schema, null, 2)}</pre>
            </details>
          )}
        </div>
        {t.example !== null && (
          <div>
            <h3 className="text-sm font-semibold text-slate-900">Example data</h3>
            <pre className={pre} data-testid="example">
              {JSON.stringify(t.example, null, 2)}
            </pre>
          </div>
        )}
        {/* Which fields name an event on the Lookup page: the catalog's setting, for those who keep it. */}
        {t.summaryFields.length > 0 && !district && (
          <p className="text-xs text-slate-700">
            Lookup cards show: <code className="font-mono">{t.summaryFields.join(", ")}</code>
          </p>
        )}
        <div>
          <h3 className="text-sm font-semibold text-slate-900">{district ? "Your subscriptions that receive it" : "Subscriptions that take it"}</h3>
          <Subscriptions subs={t.subscriptions} total={t.subscriptionCount} district={district} />
        </div>
        {signed && <SignedRequest signed={signed} />}
      </div>
    </Card>
  );
}
