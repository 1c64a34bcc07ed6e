// Numeric settings from the environment, read one way everywhere: a value that
// is not a whole number in range stops the process with a message naming the
// variable (docs/STYLE.md #12), instead of becoming NaN, which compares false with
// everything and so silently turns a limit off.

export function envInt(name: string, opts: { default: number; min?: number; max?: number }): number {
  const min = opts.min ?? 0;
  const max = opts.max ?? Number.MAX_SAFE_INTEGER;
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === "") return opts.default;
  const t = raw.trim();
  const n = /^\d+$/.test(t) ? Number(t) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw new Error(`${name} must be a whole number from ${min} to ${max} (got "${raw}"); unset it for the default ${opts.default}.`);
  return n;
}
