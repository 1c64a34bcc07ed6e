export const dynamic = "force-dynamic";

export default function LookupPage() {
  return (
    <section>
      <h1 className="text-2xl font-semibold">Lookup</h1>
      <p className="mt-2 text-slate-600">Search by event id, delivery key, student id, assignment id, district or subscription.</p>
    </section>
  );
}
