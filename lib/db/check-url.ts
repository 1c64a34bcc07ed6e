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

/** Node's codes for a server certificate it could not verify (node-pg passes them through unchanged). */
const UNVERIFIED_CERT =
  /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|ERR_TLS_CERT_ALTNAME_INVALID)$/;

/**
 * A connection error to DATABASE_URL, said as one: a TLS verification failure
 * otherwise reached the terminal as the bare "hookledger: unable to verify the
 * first certificate", with nothing naming the database or the remedy. node-pg
 * verifies the certificate for `sslmode=require` as for `verify-full`, so a
 * managed PostgreSQL whose certificate its provider's own CA signed (or a
 * self-signed one) fails here unless that CA is given. The remedy names
 * `sslmode=verify-full`: with `require` (or `prefer`, `verify-ca`) kept,
 * pg-connection-string prints a nine-line SECURITY WARNING about that alias
 * in every process, three times over on each `hookledger start`. Other errors
 * are returned as they are.
 */
export function explainConnectError(err: unknown): unknown {
  const code = (err as { code?: string })?.code ?? "";
  if (!UNVERIFIED_CERT.test(code)) return err;
  const explained = new Error(
    `the database server's TLS certificate could not be verified (${(err as Error).message}). node-pg verifies it for sslmode=require, verify-ca and verify-full alike: give DATABASE_URL sslmode=verify-full&sslrootcert=/path/to/ca.pem (the CA that signed it; a provider publishes its own), or set NODE_EXTRA_CA_CERTS to that file and sslmode=verify-full.`,
    { cause: err },
  );
  (explained as { code?: string }).code = code;
  return explained;
}
