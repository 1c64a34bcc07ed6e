// What server.ts already holds as bytes, so the publish routes need not go
// through web streams for it: the request body it read off the socket
// (lib/server/http.ts attaches it to the Request it builds, which then carries
// no stream), and the bytes an answer was made from (lib/api/handler.ts json()),
// which server.ts writes instead of reading the Response's stream back. Under
// Next the same Requests and Responses are read the usual way. A body and its
// stream cost about 30 µs to make and read, an answer's read as much again, of
// the ~350 µs of server CPU a single publish takes (BENCHMARKS.md F9).
/**
 * What an /api/v1 route reads of its request: under Next a Request; on
 * server.ts's fast path (lib/server/http.ts) a plain object with only these,
 * since undici's Request makes an AbortController and more for each one, about
 * 12 µs of a single publish's CPU (BENCHMARKS.md F9).
 */
export type ApiRequest = Pick<Request, "method" | "url" | "headers" | "body">;

const requestBodies = new WeakMap<ApiRequest, Buffer>();
const answerBytes = new WeakMap<Response, Buffer>();

/** `req`, whose body is `body` (already read, at most the route's limit plus one byte). */
export function withReadBody<R extends ApiRequest>(req: R, body: Buffer): R {
  requestBodies.set(req, body);
  return req;
}

export function readBodyOf(req: ApiRequest): Buffer | undefined {
  return requestBodies.get(req);
}

/** `res`, made from `bytes`. */
export function withAnswerBytes(res: Response, bytes: Buffer): Response {
  answerBytes.set(res, bytes);
  return res;
}

export function answerBytesOf(res: Response): Buffer | undefined {
  return answerBytes.get(res);
}
