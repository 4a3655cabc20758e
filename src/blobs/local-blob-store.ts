/**
 * Blobs as files under a root directory (the data directory): today's layout, so a recording's
 * key `recordings/<uuid>.wav` is the file `<dataDir>/recordings/<uuid>.wav`. Writes go to a
 * temporary name first and are renamed into place, so a reader never sees half a file.
 */
import { copyFile, mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { assertValidKey, type BlobInfo, type BlobRead, type BlobSource, type BlobStore, type ByteRange } from './blob-store.ts';

export class LocalBlobStore implements BlobStore {
  readonly label = 'local';
  private readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  /** The file a key names; never outside the root. */
  pathOf(key: string): string {
    assertValidKey(key);
    const file = path.resolve(this.root, key);
    if (!file.startsWith(this.root + path.sep)) throw new Error('blob key outside the store');
    return file;
  }

  async put(key: string, source: BlobSource): Promise<void> {
    const file = this.pathOf(key);
    await mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${Date.now().toString(36)}.part`;
    try {
      if ('bytes' in source) await writeFile(tmp, source.bytes);
      else await copyFile(source.file, tmp);
      await rename(tmp, file);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async get(key: string, range?: ByteRange): Promise<BlobRead | undefined> {
    // Open first, then stat the open file: a file unlinked meanwhile (archived) still reads whole.
    let handle;
    try {
      handle = await open(this.pathOf(key), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    try {
      const { size, isFile } = await handle.stat().then((s) => ({ size: s.size, isFile: s.isFile() }));
      if (!isFile) {
        await handle.close();
        return undefined;
      }
      // The stream owns the handle from here: it closes it at the end or on destroy.
      const body = handle.createReadStream(range ? { start: range.start, end: range.end } : {});
      return { size, body, ...(range ? { range } : {}) };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  async head(key: string): Promise<BlobInfo | undefined> {
    try {
      const s = await stat(this.pathOf(key));
      return s.isFile() ? { size: s.size } : undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }
}
