// An address no route answers (a mistyped or old link): the same words and way back as a dashboard page's not-found,
// rather than the framework's bare "404". Rendered per request, so its scripts carry this request's CSP nonce (a page
// prerendered at build time has none, and the browser refuses its scripts).
import Link from "next/link";
import { connection } from "next/server";

export default async function NotFound() {
  await connection();
  return (
    <main className="mx-auto max-w-xl space-y-3 p-8">
      <p className="text-lg font-semibold">hookledger</p>
      <h1 className="text-2xl font-semibold">Not found</h1>
      <p className="text-slate-700">No page answers at this address; the link may be mistyped or from an older version.</p>
      <Link href="/" className="text-blue-700 hover:underline">
        Search from the lookup page
      </Link>
    </main>
  );
}
