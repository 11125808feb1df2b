import type { ParameterObject, ReferenceObject, ResponsesObject, SchemaObject } from 'openapi3-ts/oas31';
import { PROBLEMS } from './problems.js';

export { APPROVAL_EXAMPLE } from './approval.js';

/**
 * What every operation of the document is written with — the core's and each route module's (see
 * http/route-module.ts): the shared components by reference, a JSON body with its example, the
 * problems an operation answers.
 */

export const ref = (kind: string, name: string): ReferenceObject => ({ $ref: `#/components/${kind}/${name}` });
export const problems = (...names: string[]): ResponsesObject =>
  Object.fromEntries(names.map((n) => [PROBLEMS[n].status, ref('responses', n)]));
export const requestIdHeader = { 'X-Request-ID': ref('headers', 'XRequestId') };
export const json = (schema: SchemaObject | ReferenceObject | object, example?: unknown) => ({
  'application/json': { schema: schema as SchemaObject, ...(example === undefined ? {} : { example }) },
});
/** A 2xx answer: its description, the request id header, a JSON body with its example. */
export const answer = (description: string, schema: SchemaObject, example: unknown) => ({
  description,
  headers: requestIdHeader,
  content: json(schema, example),
});
/** An optional query parameter. */
export const query = (name: string, description: string, schema: SchemaObject): ParameterObject => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});
