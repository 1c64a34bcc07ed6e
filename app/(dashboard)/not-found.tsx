import Link from "next/link";

export default function NotFound() {
  return (
    <div className="space-y-3">
      <h1 className="text-2xl font-semibold">Not found</h1>
      <p className="text-slate-700">That delivery or subscription does not exist. It may have been typed wrong.</p>
      <Link href="/" className="text-blue-700 hover:underline">
        Search from the lookup page
      </Link>
    </div>
  );
}
