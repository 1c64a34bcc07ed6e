// A small parser of the Prometheus text format, for exact assertions on series.
export type PromSample = { name: string; labels: Record<string, string>; value: number };

export function parseProm(text: string): PromSample[] {
  const out: PromSample[] = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2].replace(/\\(.)/g, (_, c) => (c === "n" ? "\n" : c));
    const v = m[3] === "+Inf" ? Infinity : m[3] === "-Inf" ? -Infinity : Number(m[3]);
    out.push({ name: m[1], labels, value: v });
  }
  return out;
}

/** The value of the one series with exactly these labels, or undefined. */
export function sample(samples: PromSample[], name: string, labels: Record<string, string>): number | undefined {
  const want = Object.entries(labels);
  const hits = samples.filter((s) => s.name === name && Object.keys(s.labels).length === want.length && want.every(([k, v]) => s.labels[k] === v));
  if (hits.length > 1) throw new Error(`${hits.length} series match ${name} ${JSON.stringify(labels)}`);
  return hits[0]?.value;
}
