import { fileURLToPath } from 'node:url';
import path from 'node:path';
import fs from 'node:fs/promises';
import { build } from 'esbuild';

/**
 * The console's build: one esbuild bundle of console/src (Preact, TypeScript, one stylesheet),
 * made by the engine itself in memory, so a fresh `npm ci && npm start` serves it with nothing
 * prebuilt, no CDN and no network. It takes a fraction of a second and runs once per process.
 */

export const CONSOLE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../console');

export interface ConsoleAssets {
  html: Buffer;
  js: Buffer;
  css: Buffer;
}

export async function buildConsole(dir = CONSOLE_DIR): Promise<ConsoleAssets> {
  const result = await build({
    entryPoints: [path.join(dir, 'src/main.tsx')],
    entryNames: 'app',
    outdir: '/console-out',
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
    tsconfig: path.join(dir, 'tsconfig.json'),
  });
  const file = (ext: string) => {
    const out = result.outputFiles.find((f) => f.path.endsWith(`app.${ext}`));
    if (!out) throw new Error(`console build produced no app.${ext}`);
    return Buffer.from(out.contents);
  };
  return { html: await fs.readFile(path.join(dir, 'index.html')), js: file('js'), css: file('css') };
}
