// Builds the audit console (console/src) into dist/console/: one ES module bundle with Preact, its
// stylesheet and its page. Run by `npm run build`; the service serves dist/console at /fr/console/.
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist/console');
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(root, 'console/src/main.tsx')],
  outfile: join(out, 'console.js'),
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  sourcemap: true,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'linked',
  logLevel: 'warning',
});
copyFileSync(join(root, 'console/index.html'), join(out, 'index.html'));
copyFileSync(join(root, 'console/style.css'), join(out, 'console.css'));
