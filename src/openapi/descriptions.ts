import type { OpenAPIObject } from 'openapi3-ts/oas31';
import { RESOURCE_NAMES } from '../domain/resources.js';

/**
 * What the members that recur across answers mean, said once. A property described where it is
 * declared keeps its own description; these fill in the rest, so that every member of every schema
 * of the document says what it is (a test walks the document for any that does not).
 */
const COMMON: Record<string, string> = {
  items: 'the entries (or items) asked for, in order',
  id: 'the id of the entry',
  resource: 'the resource, as its URL names it',
  updated: 'true: the write was applied (see `changed` for whether it recorded a change)',
  deleted: 'true: the entry was deleted',
  mode: 'hard: the entry is gone (its history stays readable); soft: it stays, with is_deleted true',
  version: 'a version the entry had (its `version` then)',
  reverted_to: 'the version the entry was made again',
  resources: 'per resource, as its URL names it',
  created: 'entries created',
  diff: 'one member per field set or changed: its value before and after (secrets as "[redacted]")',
  created_at: 'when the entry was created (ISO 8601, UTC)',
  updated_at: 'when the entry last changed (ISO 8601, UTC)',
  format: 'the format of the document and its version',
  role: 'what the caller may do: none, reader, writer or admin',
  secrets: "whether the caller may read servers' passwords and SSH private keys",
  revoked: 'true: the token is revoked',
  status: 'ok while the process serves',
  type: 'a URI naming the kind of problem (its code)',
  title: 'a short summary of the kind of problem',
  detail: 'what went wrong with this request',
  code: 'a stable code, for programs',
  field: 'the field concerned, as a path into the body (`tags.2`, `resources.servers[3].ip`)',
  message: 'what is wrong with it',
  at: 'when it was recorded (ISO 8601, UTC)',
  request_id: 'the X-Request-ID of the request that caused it',
  actor: 'who made the request: a token name, anonymous, system, import-pmacontrol or cli:<user>',
  effects: 'the entries the event changed besides its own (a deleted tag removed from servers)',
  city: 'id_geolocalisation_city',
  country: 'id_geolocalisation_country',
  ...Object.fromEntries(RESOURCE_NAMES.map((name) => [name, `the ${name} entries`])),
};

type Node = Record<string, unknown>;

function fill(node: unknown): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const child of node) fill(child);
    return;
  }
  const properties = (node as Node).properties as Record<string, Node> | undefined;
  if (properties && typeof properties === 'object') {
    for (const [name, schema] of Object.entries(properties)) {
      if (schema && typeof schema === 'object' && !('$ref' in schema) && !schema.description && COMMON[name]) {
        schema.description = COMMON[name];
      }
    }
  }
  for (const child of Object.values(node as Node)) fill(child);
}

/** Every property of every schema that lacks a description gets the common one for its name. */
export function describeProperties(document: OpenAPIObject): OpenAPIObject {
  fill(document.paths);
  fill(document.components);
  return document;
}
