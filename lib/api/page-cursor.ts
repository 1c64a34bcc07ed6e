// The opaque cursor of a keyset-paged list (subscriptions, tenants): base64url of a JSON array of strings that names
// where the page ended. Each list decides what the array holds and checks it; a cursor that is not one of ours is a
// 400 naming query.cursor, never a 500 or a page that starts somewhere arbitrary.
import "server-only";
import { AppError } from "../errors";

export const encodePageCursor = (parts: readonly string[]): string => Buffer.from(JSON.stringify(parts)).toString("base64url");

/** The refusal of a cursor this list did not answer; `words` say what to do instead. */
export function badPageCursor(words: string): AppError {
  return new AppError("validation_failed", `cursor: ${words}.`, [{ path: "query.cursor", message: words }]);
}

/** The cursor's array, or badPageCursor(words) when it is not base64url of a JSON array. */
export function decodePageCursor(cursor: string, words: string): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw badPageCursor(words);
  }
  if (!Array.isArray(parsed)) throw badPageCursor(words);
  return parsed;
}
