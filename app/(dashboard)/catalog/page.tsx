// The event catalog: every event type hookledger sends, with its fields, an example, the viewer's subscriptions
// that take it and a signed example request. Every reader sees it, a district's own accounts and portal included
// (the catalog is global; only the subscriptions are the district's), a district in its own words. Engineers and
// admins add and change types.
import type { Metadata } from "next";
import { requireViewer } from "@/lib/auth/session";
import { canAs } from "@/lib/auth/permissions";
import { getPrisma } from "@/lib/db/prisma";
import { listEventTypes } from "@/lib/catalog/manage-event-types";
import { schemaFields } from "@/lib/catalog/schema-fields";
import { requestText, signedExampleRequest } from "@/lib/catalog/signed-example";
import { CATALOG_TTL_MS } from "@/lib/catalog/publish-check";
import { EmptyState, PageHeader } from "@/components/ui/kit";
import { EventTypeCard } from "@/components/catalog/EventTypeCard";
import { EventTypeActions, NewEventTypeButton } from "@/components/catalog/EventTypeEditor";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Event types" };

export default async function CatalogPage() {
  const viewer = await requireViewer("event_types.read");
  const canManage = canAs(viewer, "event_types.manage");
  // A district (its own account or its portal) reads the catalog to build its endpoint: what it will receive, not
  // how the platform spreads a change or what the lookup cards name.
  const district = Boolean(viewer.tenantId);
  const canSubscribe = canAs(viewer, "subscriptions.update");
  const types = await listEventTypes(getPrisma(), viewer);
  const now = new Date();
  return (
    <div className="space-y-4">
      <PageHeader
        title="Event types"
        description={
          district ? (
            <>
              The events your endpoints can receive: what each one is and when it is sent, the fields its <code>data</code> carries, an example, and which of your
              subscriptions receive it. An event whose data does not match its type&apos;s fields is refused before it is sent, so your endpoint never receives one.
            </>
          ) : (
            <>
              The events hookledger sends, what each means and the fields its <code>data</code> carries. A publish whose data does not match its type&apos;s schema is
              refused with the field that is wrong, so it never reaches an endpoint. Changes reach every server within {CATALOG_TTL_MS / 1000} seconds.
            </>
          )
        }
        actions={canManage ? <NewEventTypeButton /> : undefined}
      />
      {types.length === 0 ? (
        <EmptyState title="No event types are catalogued yet.">
          {canManage
            ? "Add one with New event type: its description, a JSON Schema and an example."
            : district
              ? "None is described here yet; your endpoints receive events all the same."
              : "An engineer adds them; events are sent all the same."}
        </EmptyState>
      ) : (
        types.map((t) => {
          const signed = t.example ? signedExampleRequest(t.type, t.example, now) : null;
          return (
            <EventTypeCard
              key={t.type}
              t={t}
              fields={schemaFields(t.schema)}
              signed={signed && { text: requestText(signed), secret: signed.secret, headers: signed.headers, body: signed.body }}
              editor={canManage ? <EventTypeActions existing={t} /> : undefined}
              district={district ? { canSubscribe } : undefined}
            />
          );
        })
      )}
    </div>
  );
}
