// DATABASE_URL checked before anything connects with it: a value that is not a
// PostgreSQL URL otherwise surfaces as whatever the driver makes of it
// ("getaddrinfo ENOTFOUND base" for DATABASE_URL=notaurl). The value is not
// repeated in the message: it may hold a password.
import "server-only";

/** `url` if it is a postgres:// or postgresql:// URL with a host; otherwise an Error saying what is wrong with it. */
export function checkDatabaseUrl(url: string): string {
  const name = "DATABASE_URL";
  const shape = "postgres://user:password@host:5432/database";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`${name} is not a URL; it should look like ${shape} (percent-encode any @, : or / in the password).`);
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:")
    throw new Error(`${name} starts with ${parsed.protocol}//; a PostgreSQL URL starts with postgres:// (${shape}).`);
  if (!parsed.hostname && !parsed.searchParams.get("host")) throw new Error(`${name} names no host; it should look like ${shape}.`);
  return url;
}
