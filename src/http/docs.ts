import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Context } from 'koa';
import { RequestError } from './errors.js';
import { refuseQuery } from './request.js';

export const DOCS_PATH = '/fr/api/docs';

/** The renderer's files this page uses, served from the installed swagger-ui-dist package. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const assetDir = () => dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const loaded = new Map<string, Buffer>();

/**
 * The page: Swagger UI on this instance's OpenAPI document, with "Try it out" on. The document's
 * servers are replaced by this page's own origin, and the online validator is off, so nothing the
 * page does leaves the instance that serves it.
 */
const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>PmaControl configuration service: API</title>
  <link rel="icon" type="image/png" href="${DOCS_PATH}/assets/favicon-32x32.png">
  <link rel="stylesheet" href="${DOCS_PATH}/assets/swagger-ui.css">
</head>
<body>
  <div id="ui"></div>
  <script src="${DOCS_PATH}/assets/swagger-ui-bundle.js"></script>
  <script>
    fetch('/fr/api/openApi').then((r) => r.json()).then((spec) => {
      spec.servers = [{ url: window.location.origin, description: 'this instance' }];
      window.ui = SwaggerUIBundle({
        spec,
        dom_id: '#ui',
        deepLinking: true,
        tryItOutEnabled: true,
        validatorUrl: null,
        persistAuthorization: false,
      });
    });
  </script>
</body>
</html>
`;

export function docsPage(ctx: Context): void {
  refuseQuery(ctx);
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = PAGE;
}

export function docsAsset(ctx: Context): void {
  refuseQuery(ctx);
  const name = ctx.params.file as string;
  const type = ASSETS[name];
  if (!type) throw new RequestError(404, 'not_found', `no file ${name.slice(0, 60)} here`);
  let body = loaded.get(name);
  if (!body) {
    body = readFileSync(join(assetDir(), name));
    loaded.set(name, body);
  }
  ctx.type = type;
  ctx.body = body;
}
