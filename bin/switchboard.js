#!/usr/bin/env node
// Entry for `npx switchboard`: loads the TypeScript CLI through tsx so no build step is needed.
import { register } from 'tsx/esm/api';
register();
await import('../src/cli.ts');
