import type { OperationObject, ParameterObject, SchemaObject } from 'openapi3-ts/oas31';
import { CONFIG_STREAM } from '../domain/shared/types.js';
import { json, problems, requestIdHeader } from '../openapi/operation-kit.js';

/** The operations of the log anyone can verify (RFC 9162 proofs, C2SP checkpoints). */

const HASH = { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'a SHA-256 hash, lowercase hex' };
const COUNT = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } as SchemaObject;
const EXAMPLE_HASH = '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328';
const ORIGIN = 'pmacontrol-config/3f1c2a9b7d5e4c60';

const parameter = (name: string, description: string, required: boolean): ParameterObject => ({
  name,
  in: 'query',
  required,
  description,
  schema: COUNT,
});
const described = (description: string) => ({ ...COUNT, description });

const text = (description: string, example: string) => ({
  description,
  headers: requestIdHeader,
  content: { 'text/plain': { schema: { type: 'string' }, example } },
});

export function logCheckpoint(): OperationObject {
  return {
    tags: ['log'],
    operationId: 'getLogCheckpoint',
    summary: "The log's latest checkpoint, signed",
    description:
      'A C2SP tlog-checkpoint in a C2SP signed note: the origin line `pmacontrol-config/<log id>`, the tree size ' +
      '(the number of events), the base64 root hash of the Merkle tree of RFC 9162 over every event, a blank line, ' +
      'and the signature line of the log key (Ed25519). Every instance over one log serves the same note at the ' +
      'same size. Keep checkpoints outside this host: a later history that does not extend them cannot be hidden.',
    responses: {
      200: text(
        'the checkpoint',
        `${ORIGIN}\n1532\nXcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=\n\n— ${ORIGIN} AAAAAA…\n`,
      ),
      ...problems('BadRequest', 'Unavailable'),
    },
  };
}

export function logPublicKey(): OperationObject {
  return {
    tags: ['log'],
    operationId: 'getLogPublicKey',
    summary: "The log key's public half, to verify checkpoints",
    description:
      'The verifier key in C2SP note form: `<origin>+<8 hex key id>+<base64(0x01 ‖ Ed25519 public key)>`. The log ' +
      'also records it as a LogKeyRecorded event, so a change of key shows in the change log.',
    security: [],
    responses: {
      200: text('the verifier key', `${ORIGIN}+7997405c+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW\n`),
      ...problems('BadRequest', 'Unavailable'),
    },
  };
}

export function logLeaf(): OperationObject {
  return {
    tags: ['log'],
    operationId: 'getLogLeaf',
    summary: 'The leaf of one event: the exact bytes hashed into the tree',
    description:
      'The event as stored — position, type, stream and revision, data and metadata — as canonical JSON (keys ' +
      'sorted, no space), each sealed secret value replaced by the lowercase hex SHA-256 of the sealed value. Its ' +
      'leaf hash is SHA-256(0x00 ‖ these bytes).',
    parameters: [
      {
        name: 'position',
        in: 'path',
        required: true,
        description: 'the position of the event, from 1',
        schema: COUNT,
        example: 12,
      },
    ],
    responses: {
      200: {
        description: 'the leaf bytes',
        headers: requestIdHeader,
        content: json(
          { type: 'object', description: 'the event as hashed' },
          {
            data: { changes: { port: 3307 }, id: 1 },
            metadata: {
              actor: 'ansible',
              at: '2026-11-23T12:09:38.101Z',
              entry: 'server-1',
              request_id: 'run-7',
              schema: 2,
            },
            position: 12,
            revision: 11,
            stream: CONFIG_STREAM,
            type: 'ServerUpdated',
          },
        ),
      },
      ...problems('BadRequest', 'NotFound', 'Unavailable'),
    },
  };
}

export function logInclusion(): OperationObject {
  const schema = {
    type: 'object',
    properties: {
      position: described('the position of the event'),
      size: described('the tree size the path leads to the root of'),
      leaf_hash: { ...HASH, description: "the event's leaf hash, SHA-256(0x00 ‖ leaf bytes), lowercase hex" },
      hashes: { type: 'array', items: HASH, description: 'the audit path of RFC 9162 §2.1.3, leaf to root' },
    },
    required: ['position', 'size', 'leaf_hash', 'hashes'],
    additionalProperties: false,
  };
  return {
    tags: ['log'],
    operationId: 'getLogInclusionProof',
    summary: 'Proof that an event is in the tree of a checkpoint',
    description:
      'The audit path of the event at `position` in the tree of the first `size` events (RFC 9162 §2.1.3): with ' +
      "the leaf hash and the checkpoint's root, anyone can check it without trusting the service.",
    parameters: [
      parameter('position', 'the position of the event, from 1', true),
      parameter('size', 'the tree size of the checkpoint (default: the current size)', false),
    ],
    responses: {
      200: {
        description: 'the proof',
        headers: requestIdHeader,
        content: json(schema, { position: 12, size: 1532, leaf_hash: EXAMPLE_HASH, hashes: [EXAMPLE_HASH] }),
      },
      ...problems('BadRequest', 'Unavailable'),
    },
  };
}

export function logConsistency(): OperationObject {
  const schema = {
    type: 'object',
    properties: {
      from: described('the older tree size'),
      to: described('the newer tree size'),
      hashes: { type: 'array', items: HASH, description: 'the consistency proof of RFC 9162 §2.1.4' },
    },
    required: ['from', 'to', 'hashes'],
    additionalProperties: false,
  };
  return {
    tags: ['log'],
    operationId: 'getLogConsistencyProof',
    summary: 'Proof that the log only grew between two checkpoints',
    description:
      'The proof (RFC 9162 §2.1.4) that the tree of the first `from` events is a prefix of the tree of the first ' +
      '`to`: with both roots, anyone can check that no event before `from` was changed, removed or moved.',
    parameters: [
      parameter('from', 'the tree size of the older checkpoint, from 1', true),
      parameter('to', 'the tree size of the newer checkpoint, at most the current size', true),
    ],
    responses: {
      200: {
        description: 'the proof',
        headers: requestIdHeader,
        content: json(schema, { from: 1000, to: 1532, hashes: [EXAMPLE_HASH] }),
      },
      ...problems('BadRequest', 'Unavailable'),
    },
  };
}
