/**
 * Writes a whole file under a temporary name beside it (`<name>.<pid>.<n>.part`), then renames it
 * into place: a reader (the API, the recording archive) sees the old file or the new one, never
 * half of one. A failed write leaves no temporary file.
 */
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

let seq = 0;

export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${(seq++).toString(36)}.part`;
  try {
    await writeFile(tmp, data);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
