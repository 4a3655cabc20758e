// Entry of the RTP I/O thread (see thread-io.ts). A worker is started by Node itself, outside
// tsx's or vitest's transform, so this plain-JavaScript file registers tsx in the thread first
// (as denoise-worker-entry.mjs does) and then loads the TypeScript that does the work.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
