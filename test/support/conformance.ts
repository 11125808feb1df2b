import type { OpenAPIObject, ReferenceObject, ResponseObject } from 'openapi3-ts/oas31';
import { apiDocument } from '../../src/main.js';
import { createAjv } from '../../src/schemas/validator.js';

/**
 * Checks a real response against the schema the OpenAPI document gives for that path, method and
 * status. Every HTTP test goes through it, so the document cannot drift from the service.
 */
export class Conformance {
  readonly doc: OpenAPIObject = apiDocument('test');
  private readonly ajv = createAjv();
  private readonly templates: { template: string; pattern: RegExp }[];

  constructor() {
    this.ajv.addSchema(this.doc as object, 'api');
    this.templates = Object.keys(this.doc.paths ?? {}).map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
    }));
  }

  /** Returns the problems found; an empty list means the response is as documented. */
  check(method: string, path: string, status: number, contentType: string | null, body: unknown): string[] {
    const bare = path.split('?')[0];
    const found = this.templates.find((t) => t.pattern.test(bare));
    if (!found) return status === 404 || status === 405 ? [] : [`${bare} is not documented`];
    const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    const operation = (
      this.doc.paths![found.template] as Record<string, { responses: Record<string, ResponseObject | ReferenceObject> }>
    )[verb];
    if (!operation)
      return status === 405 || method === 'OPTIONS' ? [] : [`${method} ${found.template} is not documented`];
    let response = operation.responses[String(status)];
    if (!response) return [`${method} ${found.template} does not document status ${status}`];
    let pointer = `api#/paths/${pointerEscape(found.template)}/${verb}/responses/${status}`;
    if ('$ref' in response) {
      const name = response.$ref.split('/').pop()!;
      response = this.doc.components!.responses![name] as ResponseObject;
      pointer = `api#/components/responses/${name}`;
    }
    if (!response.content || method === 'HEAD' || status === 304) return [];
    const media = Object.keys(response.content).find((m) => contentType?.startsWith(m));
    if (!media) return [`content type ${contentType} is not documented for ${method} ${found.template} ${status}`];
    if (!/^application\/(problem\+)?json$/.test(media)) return [];
    const validate = this.ajv.getSchema(`${pointer}/content/${pointerEscape(media)}/schema`);
    if (!validate) return [`no schema at ${pointer}`];
    return validate(body)
      ? []
      : (validate.errors ?? []).map((e) => `${method} ${bare} ${status}: ${e.instancePath} ${e.message}`);
  }
}

const pointerEscape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
