export default function AuthLayout({ children }: { children: React.ReactNode }) {
  return (
    <div className="flex min-h-screen items-start justify-center px-4 pt-24">
      <main className="w-full max-w-sm">{children}</main>
    </div>
  );
}
