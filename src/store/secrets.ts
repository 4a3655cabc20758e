import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Encrypts secrets at rest (SIP passwords, provider tokens) with AES-256-GCM under a key kept in
 * the data directory (created once, mode 0600). Anyone holding the database alone cannot read them.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('secret key must be 32 bytes');
  }

  static forDataDir(dataDir: string): SecretBox {
    if (dataDir === ':memory:') return new SecretBox(crypto.randomBytes(32));
    const file = path.join(dataDir, 'secret.key');
    fs.mkdirSync(dataDir, { recursive: true });
    try {
      fs.writeFileSync(file, crypto.randomBytes(32).toString('base64'), { flag: 'wx', mode: 0o600 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    return new SecretBox(Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64'));
  }

  seal(plain: string): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), data.toString('base64')].join(':');
  }

  open(sealed: string): string {
    const [version, iv, tag, data] = sealed.split(':');
    if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('unreadable sealed secret');
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
  }
}

/** How a secret is shown to clients: never the secret, but enough to recognise it. */
export const MASK = '********';

/** The mask of a secret: MASK plus its last 4 characters when it has 12 or more, else MASK alone. */
export function maskSecret(plain: string): string {
  return plain.length >= 12 ? MASK + plain.slice(-4) : MASK;
}

/** A value a client sent back as it read it (masked), not a new secret. */
export function isMasked(value: string): boolean {
  return value.startsWith(MASK);
}
