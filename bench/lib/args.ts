// The bench scripts' numeric flags: `--name 123`, or the default when the flag is absent.
export function numberArg(name: string, def: number): number {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : def;
}
