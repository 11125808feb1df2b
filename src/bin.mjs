#!/usr/bin/env node
// The package's `bin`: runs the TypeScript CLI through tsx, which is a runtime dependency.
import { register } from 'tsx/esm/api';

register();
await import('./cli.ts');
