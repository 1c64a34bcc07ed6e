import "server-only";
import pino from "pino";

// Structured logs (docs/STYLE.md #13). LOG_LEVEL=debug for more; tests default to warn.
export const logger = pino({
  level: process.env.LOG_LEVEL ?? (process.env.VITEST ? "warn" : "info"),
  base: { pid: process.pid },
  redact: { paths: ["secret", "*.secret", "headers.authorization", "*.token"], censor: "[redacted]" },
});
