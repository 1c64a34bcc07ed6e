"use client";
// Client-side calls to /api/v1 from dashboard components. The session cookie
// authenticates; the CSRF token (double-submit: the readable `hl_csrf` cookie
// echoed in the `x-hookledger-csrf` header) proves the request came from our page.
export class ApiError extends Error {
  constructor(
    public status: number,
    public code: string,
    message: string,
    public details?: unknown,
  ) {
    super(message);
  }
}

function csrfToken(): string {
  const m = typeof document !== "undefined" ? document.cookie.match(/(?:^|;\s*)hl_csrf=([^;]+)/) : null;
  return m ? decodeURIComponent(m[1]) : "";
}

/**
 * A page whose session ended (lib/api/handler.ts says so with `details.signIn`) has nothing left to show or do: the
 * browser goes to the sign-in page's line for it (a district portal's "has ended", or the form, back here after),
 * rather than each poll and button repeating the refusal.
 */
function toSignIn(details: unknown): void {
  const to = (details as { signIn?: unknown } | null | undefined)?.signIn;
  if (typeof window === "undefined" || typeof to !== "string" || !to.startsWith("/signin")) return;
  const here = window.location.pathname + window.location.search;
  window.location.assign(to === "/signin" ? `/signin?next=${encodeURIComponent(here)}` : to);
}

export async function apiFetch<T = unknown>(path: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  const method = init.method ?? (init.body === undefined ? "GET" : "POST");
  const res = await fetch(path, {
    method,
    credentials: "same-origin",
    signal: init.signal,
    headers: {
      accept: "application/json",
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      ...(method === "GET" ? {} : { "x-hookledger-csrf": csrfToken() }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  const json = text ? JSON.parse(text) : null;
  if (!res.ok) {
    const e = json?.error;
    if (res.status === 401) toSignIn(e?.details);
    throw new ApiError(res.status, e?.code ?? "error", e?.message ?? `Request failed with HTTP ${res.status}.`, e?.details);
  }
  return json as T;
}
