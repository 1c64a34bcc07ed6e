// Bounded caches for hot paths (parsed retry policies, parsed URLs, decoded
// signing keys, metric children) keyed by what the claim returns: bounded by
// emptying the map once it holds `limit` entries, so a long-running worker
// that sees ever new subscriptions does not grow without end.

/** `map`'s value for `key`, or `make()` stored under it. A stored null is a hit. */
export function memoized<K, V>(map: Map<K, V>, key: K, make: () => V, limit = 10_000): V {
  let v = map.get(key);
  if (v === undefined) {
    if (map.size >= limit) map.clear();
    v = make();
    map.set(key, v);
  }
  return v;
}
