// A paged list's `limit` query parameter, as every keyset-paged list takes it (subscriptions, tenants): the same
// words for the same mistakes. Client-safe, like the input modules that use it.
import { z } from "zod";

export const zPageLimit = (max: number, dflt: number) =>
  z.coerce
    .number({ error: `limit is a whole number from 1 to ${max}` })
    .int(`limit is a whole number from 1 to ${max}`)
    .min(1, `limit is at least 1`)
    .max(max, `limit is at most ${max}; page with nextCursor for more`)
    .default(dflt);
