import type { Metadata } from "next";
import "./globals.css";
import { TITLE_TEMPLATE } from "@/lib/page-title";
import { RenderedAt } from "@/components/ui/time";

export const metadata: Metadata = {
  title: { default: "hookledger", template: TITLE_TEMPLATE },
  description: "Webhook delivery ledger: every delivery answerable.",
};

export default function RootLayout({ children }: { children: React.ReactNode }) {
  return (
    <html lang="en">
      <body className="min-h-screen bg-slate-50 font-sans text-slate-900 antialiased">
        <RenderedAt at={Date.now()}>{children}</RenderedAt>
      </body>
    </html>
  );
}
