// Entry of the denoiser worker thread (see denoise-worker.ts). A worker is started by Node
// itself, outside tsx's or vitest's transform, so this plain-JavaScript file registers tsx in the
// thread first (the same trick as bin/switchboard.js; tsx is a runtime dependency) and then loads
// the TypeScript that does the work: the very modules the in-thread denoisers use.
import { register } from 'tsx/esm/api';

register();
await import('./denoise-worker-thread.ts');
