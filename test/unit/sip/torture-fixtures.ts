/** The RFC 4475 torture messages, read as Buffers, with INDEX.tsv's classification. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DIR = fileURLToPath(new URL('../../../fixtures/sip/rfc4475/', import.meta.url));

export interface TortureCase {
  name: string;
  section: string;
  category: 'valid' | 'invalid' | 'transaction' | 'application' | 'backward';
  expected: string;
  byteLength: number;
}

export const TORTURE_CASES: TortureCase[] = readFileSync(`${DIR}messages/INDEX.tsv`, 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((line) => {
    const [name = '', section = '', category = '', expected = '', byteLength = '0'] = line.split('\t');
    return { name, section, category: category as TortureCase['category'], expected, byteLength: Number(byteLength) };
  });

export function torture(name: string): Buffer {
  return readFileSync(`${DIR}messages/${name}.dat`);
}

export function tortureExtra(file: string): Buffer {
  return readFileSync(`${DIR}extras/${file}`);
}
