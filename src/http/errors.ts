import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { Held } from '../application/gate.js';
import { DomainError } from '../domain/shared/errors.js';
import { StoreUnavailable } from '../event-store/port.js';
import { ReadModelsRebuilding } from '../read-models/port.js';

/** Refusals that come from the request itself rather than from a domain rule. */
export class RequestError extends DomainError {}

export const invalidJson = (detail: string) => new RequestError(400, 'invalid_json', detail);
export const invalidId = (raw: string) =>
  new RequestError(
    400,
    'invalid_id',
    `"${raw.slice(0, 40)}" is not an id: use a decimal integer from 1 to 9007199254740991`,
  );
export const invalidQuery = (detail: string) => new RequestError(400, 'invalid_query', detail);
export const unknownResource = (name: string) =>
  new RequestError(404, 'unknown_resource', `there is no resource "${name.slice(0, 40)}"`);
export const unknownRoute = (path: string) =>
  new RequestError(404, 'not_found', `nothing is served at ${path.slice(0, 200)}`);
export const methodNotAllowed = (method: string, allow: string[]) =>
  new RequestError(405, 'method_not_allowed', `${method} is not allowed here; use ${allow.join(', ')}`, { allow });
export const payloadTooLarge = (limit = 1024 * 1024, detail = `the body is over ${limit / (1024 * 1024)} MiB`) =>
  new RequestError(413, 'payload_too_large', detail);
export const unsupportedMediaType = (type: string) =>
  new RequestError(
    415,
    'unsupported_media_type',
    `send JSON (application/json), not "${type.slice(0, 80) || 'nothing'}"`,
  );

export const misdirected = (host: string) =>
  new RequestError(
    421,
    'misdirected_request',
    `this service does not answer to the host "${host.slice(0, 100)}"; add it to ALLOWED_HOSTS if it should`,
  );

export const invalidHeader = (detail: string) => new RequestError(400, 'invalid_header', detail);

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  421: 'Misdirected Request',
  422: 'Unprocessable Content',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export const problemType = (code: string) => `urn:pmacontrol:config:problem:${code}`;

function render(ctx: Context, status: number, code: string, detail: string, extra: Record<string, unknown> = {}): void {
  const { allow, challenge, retryAfter, ...fields } = extra;
  if (Array.isArray(allow)) ctx.set('Allow', allow.join(', '));
  if (typeof challenge === 'string') ctx.set('WWW-Authenticate', challenge);
  if (typeof retryAfter === 'string') ctx.set('Retry-After', retryAfter);
  ctx.state.errorCode = code;
  ctx.status = status;
  ctx.type = 'application/problem+json';
  ctx.body = {
    type: problemType(code),
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    code,
    error: detail,
    ...fields,
  };
}

/** A request held for approval: its 202, as the approvals wing made it. */
function sendHeld(ctx: Context, held: Held): void {
  ctx.status = held.response.status;
  for (const [name, value] of Object.entries(held.response.headers)) ctx.set(name, value);
  ctx.type = 'application/json';
  ctx.body = held.response.body;
}

/** The one place errors become responses: problem+json, never a stack trace or a secret. */
export function errorHandler(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
    } catch (error) {
      if (error instanceof Held) return sendHeld(ctx, error);
      if (error instanceof DomainError) return render(ctx, error.status, error.code, error.message, error.extra);
      if (error instanceof StoreUnavailable) {
        logger.warn(
          { request_id: ctx.state.requestId, err: { name: error.name, message: error.message } },
          'event store unavailable',
        );
        ctx.set('Retry-After', '1');
        const detail =
          error.outcome === 'unknown'
            ? 'the event store stopped answering while it recorded the write: whether it was recorded is ' +
              'not known; read the entry, or retry with the same Idempotency-Key'
            : 'the event store cannot be reached; nothing was written';
        return render(ctx, 503, 'unavailable', detail);
      }
      if (error instanceof ReadModelsRebuilding) {
        ctx.set('Retry-After', '5');
        return render(
          ctx,
          503,
          'unavailable',
          'the change log and the past are being rebuilt from the event log after damage was found in their ' +
            'file; nothing was written, and the configuration as it is now is still served',
        );
      }
      const status = (error as { status?: number; expose?: boolean }).status;
      if (status && status >= 400 && status < 500) {
        if (status === 413) return render(ctx, 413, 'payload_too_large', 'the body is over 1 MiB');
        if (status === 415) return render(ctx, 415, 'unsupported_media_type', 'send the body in UTF-8 JSON');
        return render(ctx, 400, 'invalid_json', 'the request body could not be read');
      }
      logger.error(
        {
          request_id: ctx.state.requestId,
          err: { name: (error as Error).name, message: (error as Error).message, stack: (error as Error).stack },
        },
        'unexpected error',
      );
      render(ctx, 500, 'internal', 'an unexpected error occurred; the request id identifies it in the logs');
    }
  };
}
