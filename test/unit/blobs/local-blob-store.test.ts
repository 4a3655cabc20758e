import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isValidKey } from '../../../src/blobs/blob-store.ts';
import { LocalBlobStore } from '../../../src/blobs/local-blob-store.ts';
import { writeFileAtomic } from '../../../src/util/write-file-atomic.ts';

const root = mkdtempSync(path.join(tmpdir(), 'sb-local-blobs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function text(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString();
}

describe('LocalBlobStore (files under the data dir)', () => {
  const store = new LocalBlobStore(root);

  it('keys are plain relative paths: traversal, absolute paths, backslashes and NUL are refused', () => {
    for (const bad of ['', '/etc/passwd', '../x', 'recordings/../../x', 'a//b', './a', 'a\\b', 'a\0b', 'x'.repeat(600)]) {
      expect(isValidKey(bad), JSON.stringify(bad)).toBe(false);
      expect(() => store.pathOf(bad)).toThrow();
    }
    expect(store.pathOf('recordings/a.wav')).toBe(path.join(root, 'recordings', 'a.wav'));
  });

  it('put, head, get whole and by range, delete (twice)', async () => {
    await store.put('recordings/a.json', { bytes: Buffer.from('0123456789') });
    expect(await store.head('recordings/a.json')).toEqual({ size: 10 });
    const whole = await store.get('recordings/a.json');
    expect(whole?.size).toBe(10);
    expect(await text(whole!.body)).toBe('0123456789');
    const part = await store.get('recordings/a.json', { start: 2, end: 4 });
    expect(part?.range).toEqual({ start: 2, end: 4 });
    expect(await text(part!.body)).toBe('234');
    await store.delete('recordings/a.json');
    await store.delete('recordings/a.json');
    expect(await store.head('recordings/a.json')).toBeUndefined();
    expect(await store.get('recordings/a.json')).toBeUndefined();
  });

  it('put from a file copies it; no temporary file is left', async () => {
    const src = path.join(root, 'src.bin');
    writeFileSync(src, 'abc');
    await store.put('recordings/copy.bin', { file: src });
    expect(await text((await store.get('recordings/copy.bin'))!.body)).toBe('abc');
    expect(readdirSync(path.join(root, 'recordings')).filter((n) => n.endsWith('.part'))).toEqual([]);
  });

  it('a read already open survives the file being removed (archived) under it', async () => {
    await store.put('recordings/open.txt', { bytes: Buffer.from('still here') });
    const read = await store.get('recordings/open.txt');
    await store.delete('recordings/open.txt');
    expect(await text(read!.body)).toBe('still here');
  });

  it('writeFileAtomic replaces a file whole and leaves no temporary name', async () => {
    const file = path.join(root, 'atomic', 'f.txt');
    await writeFileAtomic(file, 'one');
    await writeFileAtomic(file, 'two');
    expect(readdirSync(path.dirname(file))).toEqual(['f.txt']);
    expect(await text((await store.get('atomic/f.txt'))!.body)).toBe('two');
  });
});
