import type { OperationObject } from 'openapi3-ts/oas31';
import { json, problems, requestIdHeader } from './operation-kit.js';

const status = (values: string[], extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties: { status: { type: 'string', enum: values }, ...extra },
  required: ['status', ...Object.keys(extra)],
});

export function healthz(): OperationObject {
  return {
    tags: ['operations'],
    operationId: 'getHealth',
    summary: 'Liveness: the process serves HTTP',
    description: 'For a liveness probe. Answers as long as the process can answer at all; says nothing of the store.',
    security: [],
    responses: {
      200: { description: 'alive', headers: requestIdHeader, content: json(status(['ok']), { status: 'ok' }) },
      ...problems('BadRequest'),
    },
  };
}

export function readyz(): OperationObject {
  const ready = status(['ready'], { position: { type: 'integer', minimum: 0, description: 'the position folded' } });
  const notReady = status(['not_ready'], {
    reason: {
      type: 'string',
      description: 'stopping, catching up (with how far behind), or the store does not answer',
    },
  });
  return {
    tags: ['operations'],
    operationId: 'getReadiness',
    summary: 'Readiness: the store answers and this instance has folded the whole log',
    description:
      'For a readiness probe or a load balancer. 503 while the instance is stopping (from the first moment of a ' +
      'graceful stop), while it is behind the log, or when the event store does not answer within 2 s.',
    security: [],
    responses: {
      200: {
        description: 'ready',
        headers: requestIdHeader,
        content: json(ready, { status: 'ready', position: 1532 }),
      },
      503: {
        description: 'not ready',
        headers: requestIdHeader,
        content: json(notReady, { status: 'not_ready', reason: 'stopping' }),
      },
      ...problems('BadRequest'),
    },
  };
}

export function metrics(): OperationObject {
  return {
    tags: ['operations'],
    operationId: 'getMetrics',
    summary: 'Prometheus metrics',
    description:
      'Text exposition format: pmacontrol_http_requests_total{route,method,status}, ' +
      'pmacontrol_http_request_duration_seconds{route,method}, pmacontrol_event_store_append_duration_seconds, ' +
      'pmacontrol_events_appended_total, pmacontrol_projected_position, pmacontrol_follow_lag_events, ' +
      'pmacontrol_build_info{version} (always 1) and the standard process and runtime metrics (process_*, ' +
      'nodejs_*). Routes are templates, never raw paths.',
    security: [],
    responses: {
      200: {
        description: 'the metrics',
        headers: requestIdHeader,
        content: {
          'text/plain': {
            schema: { type: 'string' },
            example:
              'pmacontrol_http_requests_total{route="/fr/api/config/servers/:id",method="GET",status="200"} 42\n',
          },
        },
      },
      ...problems('BadRequest'),
    },
  };
}

export function docs(): OperationObject {
  return {
    tags: ['operations'],
    operationId: 'getDocs',
    summary: 'This API, as an interactive page',
    description:
      'Swagger UI on this document, served from the installed package: every operation, its fields and ' +
      'examples, and "Try it out" against this instance (and only this one). Send a token with Authorize.',
    security: [],
    responses: {
      200: {
        description: 'the page',
        headers: requestIdHeader,
        content: { 'text/html': { schema: { type: 'string' }, example: '<!doctype html>…' } },
      },
      ...problems('BadRequest'),
    },
  };
}

export function docsAsset(): OperationObject {
  return {
    tags: ['operations'],
    operationId: 'getDocsAsset',
    summary: 'A file of the interactive page',
    description: "The renderer's stylesheet, script and icon, from the installed swagger-ui-dist package.",
    security: [],
    parameters: [
      {
        name: 'file',
        in: 'path',
        required: true,
        description: 'one of the files the page uses',
        schema: { type: 'string', enum: ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png'] },
      },
    ],
    responses: {
      200: {
        description: 'the file',
        headers: requestIdHeader,
        content: {
          'text/css': { schema: { type: 'string' }, example: '.swagger-ui{…}' },
          'text/javascript': { schema: { type: 'string' }, example: '!function(e,t){…}' },
          'image/png': { schema: { type: 'string', contentMediaType: 'image/png' }, example: '(binary)' },
        },
      },
      ...problems('BadRequest', 'NotFound'),
    },
  };
}
