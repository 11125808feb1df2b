import { Validator } from '@seriousme/openapi-schema-validator';
import type { OperationObject, RequestBodyObject } from 'openapi3-ts/oas31';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isResourceName, RESOURCE_NAMES, resourceOf } from '../../src/domain/resources.js';
import { API_ROUTES, ROUTES } from '../../src/http/routes/descriptors.js';
import { apiDocument } from '../../src/main.js';
import { createAjv, WriteValidator } from '../../src/schemas/validator.js';
import { Conformance } from '../support/conformance.js';
import { BASE, startHarness } from '../support/harness.js';

const it = suite('OpenAPI document');

it('is a valid OpenAPI 3.1 document', async () => {
  const result = await new Validator().validate(JSON.parse(JSON.stringify(apiDocument('test'))));
  assert.ok(result.valid, JSON.stringify(result.errors, null, 2));
});

it('GET /fr/api/openApi serves it', async () => {
  const h = await startHarness();
  try {
    const reply = await h.request('GET', '/fr/api/openApi');
    assert.is(reply.status, 200);
    assert.is(reply.body.openapi, '3.1.0');
    assert.equal(reply.body, JSON.parse(JSON.stringify(apiDocument('test'))));
  } finally {
    await h.close();
  }
});

it('documents every route the service mounts, with an operationId, a summary and a 4xx response', () => {
  const doc = apiDocument('test');
  assert.is(ROUTES.length, RESOURCE_NAMES.length * 8);
  for (const route of [...ROUTES, ...API_ROUTES]) {
    const operation = doc.paths?.[route.path]?.[route.method.toLowerCase() as 'get'];
    assert.ok(operation, `${route.method} ${route.path}`);
    assert.ok(operation.operationId && operation.summary);
    assert.ok(Object.keys(operation.responses ?? {}).some((s) => s.startsWith('4')));
    if (['POST', 'PUT', 'PATCH'].includes(route.method))
      assert.ok(operation.requestBody, `${route.method} ${route.path} body`);
  }
  const patch = doc.paths?.[`${BASE}/servers/{id}`]?.patch;
  assert.ok(
    patch?.requestBody && 'content' in patch.requestBody && patch.requestBody.content['application/merge-patch+json'],
  );
});

it('"Try it out" works twice in a row: no fixed header or query value, no PATCH that moves an entry', () => {
  const doc = apiDocument('test');
  const components = doc.components?.parameters ?? {};
  const fixed: string[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, operation] of Object.entries(item as Record<string, OperationObject>)) {
      for (const given of operation.parameters ?? []) {
        const parameter = '$ref' in given ? components[given.$ref.split('/').pop()!] : given;
        if (!('in' in parameter) || parameter.in === 'path') continue;
        if (parameter.example !== undefined || parameter.examples !== undefined)
          fixed.push(`${method} ${path} ${parameter.name}`);
      }
      if (method !== 'patch') continue;
      const body = (operation.requestBody as RequestBodyObject).content['application/json'].example;
      const resource = ROUTES.find((route) => route.path === path && route.method === 'PATCH')!.resource;
      const references = Object.entries(resourceOf(resource).declaration.fields).filter(([, spec]) => spec.reference);
      for (const [field] of references) assert.not.ok(field in body, `PATCH ${path} example sets ${field}`);
    }
  }
  assert.equal(fixed, [], 'parameters the page would fill in');
});

it('summaries read as sentences: an environment, a DNS alias, an SSH key, no CamelCase', () => {
  const summaries = Object.values(apiDocument('test').paths ?? {}).flatMap((item) =>
    Object.values(item as Record<string, OperationObject>).map((operation) => operation.summary ?? ''),
  );
  assert.ok(summaries.includes('Create an environment'));
  assert.ok(summaries.includes('Create an SSH key'));
  assert.ok(summaries.includes('List DNS aliases'));
  for (const summary of summaries) {
    assert.not.match(summary, /\ba [aeiouAEIOU]|\ban [b-df-hj-np-tv-z]/, summary);
    assert.not.match(summary, /[a-z][A-Z]/, summary);
  }
});

it('every member of every schema, and every operation, says what it is', () => {
  const undescribed: string[] = [];
  const walk = (node: unknown, path: string) => {
    if (node === null || typeof node !== 'object') return;
    const properties = (node as { properties?: Record<string, Record<string, unknown>> }).properties;
    for (const [name, schema] of Object.entries(properties ?? {})) {
      if (!('$ref' in schema) && typeof schema.description !== 'string') undescribed.push(`${path}.${name}`);
    }
    for (const [key, child] of Object.entries(node)) walk(child, `${path}/${key}`);
  };
  const doc = apiDocument('test');
  walk(doc, '');
  assert.equal(undescribed, []);
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, operation] of Object.entries(item as Record<string, OperationObject>)) {
      assert.ok(operation.summary && operation.description, `${method} ${path}`);
    }
  }
});

it('every request example of the document is accepted by the validator the service runs, in its own mode', () => {
  const validator = new WriteValidator();
  const doc = apiDocument('test');
  let checked = 0;
  for (const route of ROUTES.filter((r) => ['create', 'replace', 'patch'].includes(r.kind))) {
    const operation = doc.paths?.[route.path]?.[route.method.toLowerCase() as 'post'] as OperationObject;
    for (const media of Object.values((operation.requestBody as RequestBodyObject).content)) {
      assert.ok(media.example, `${route.method} ${route.path} has an example`);
      const mode = route.kind as 'create' | 'replace' | 'patch';
      assert.ok(isResourceName(route.resource));
      validator.parse(route.resource, mode, structuredClone(media.example), 1);
      checked += 1;
    }
  }
  assert.ok(checked >= 7 * 4);
});

it('every response example of the document matches its own schema', () => {
  const doc = apiDocument('test');
  const ajv = createAjv();
  ajv.addSchema(doc as object, 'api');
  let checked = 0;
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, operation] of Object.entries(item as Record<string, OperationObject>)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        for (const [media, content] of Object.entries(
          (response as { content?: Record<string, { example?: unknown }> }).content ?? {},
        )) {
          if (content.example === undefined) continue;
          const pointer = `api#/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}/responses/${status}/content/${media.replace(/\//g, '~1')}/schema`;
          const validate = ajv.getSchema(pointer)!;
          assert.ok(validate(content.example), `${method} ${path} ${status}: ${JSON.stringify(validate.errors)}`);
          checked += 1;
        }
      }
    }
  }
  assert.ok(checked >= 7 * 7);
});

it('the conformance check rejects a body that does not match the document', () => {
  const check = new Conformance();
  assert.equal(check.check('GET', `${BASE}/tags`, 200, 'application/json', { items: [], total: 0 }), []);
  assert.ok(check.check('GET', `${BASE}/tags`, 200, 'application/json', { items: [{ id: 'x' }], total: 0 }).length > 0);
  assert.ok(check.check('GET', `${BASE}/tags/1`, 200, 'application/json', { item: { id: 1, name: 'n' } }).length > 0);
  assert.ok(check.check('POST', `${BASE}/tags`, 418, 'application/json', {}).length > 0);
  assert.ok(check.check('GET', `${BASE}/tags/1`, 404, 'application/problem+json', { code: 'not_found' }).length > 0);
});

it.run();
