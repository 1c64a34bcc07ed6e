import Link from "next/link";
import { NotFoundReason } from "@/components/dashboard/NotFoundReason";

export default function NotFound() {
  return (
    <div className="space-y-3">
      <h1 className="text-2xl font-semibold">Not found</h1>
      <NotFoundReason />
      <Link href="/" className="text-blue-700 hover:underline">
        Search from the lookup page
      </Link>
    </div>
  );
}
