// Typed errors, mapped to HTTP in one place (lib/api/handler.ts).
import { ZodError } from "zod";

const ERROR_STATUS = {
  bad_request: 400,
  validation_failed: 400,
  endpoint_auth_must_be_restated: 400,
  invalid_json: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  event_conflict: 409,
  event_erased: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  // An event's data does not match its type's JSON Schema in the event catalog (lib/catalog).
  schema_mismatch: 422,
  rate_limited: 429,
  unavailable: 503,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;

export class AppError extends Error {
  constructor(
    public code: ErrorCode,
    message: string,
    public details?: unknown,
  ) {
    super(message);
    this.name = "AppError";
  }
  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export function notFound(what: string, id: string): AppError {
  return new AppError("not_found", `${what} ${id} does not exist.`);
}

/** A zod error as a 400 naming each field. */
export function fromZod(err: ZodError, where = "body"): AppError {
  const details = err.issues.map((i) => ({ path: [where, ...i.path].join("."), message: i.message }));
  const first = details[0];
  return new AppError("validation_failed", first ? `${first.path}: ${first.message}` : "Invalid input.", details);
}
