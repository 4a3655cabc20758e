/**
 * Certificates made at test time with the openssl command (Debian's openssl): a private CA and
 * leaf certificates it signs, for SIP over TLS between our stack and real peers on loopback.
 * Nothing is checked in: every run makes fresh keys in a directory the caller removes.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCa {
  dir: string;
  /** The CA certificate (PEM file). */
  caFile: string;
  /** Issues a leaf certificate for these subject alternative names (`DNS:…`, `IP:…`). */
  issue(name: string, altNames: string[], opts?: { days?: number }): LeafCert;
  remove(): void;
}

export interface LeafCert {
  certFile: string;
  keyFile: string;
  /** Certificate and key in one PEM file (what baresip and Kamailio-style peers take). */
  bundleFile: string;
  /** SHA-256 fingerprint as openssl prints it, to tell certificates apart. */
  fingerprint: string;
}

function openssl(args: string[], cwd: string): string {
  return execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] }).toString('utf8');
}

/** A new CA in a temp directory. */
export function makeTestCa(name = 'Switchboard Test CA'): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'sb-tls-'));
  const caFile = join(dir, 'ca.pem');
  const caKey = join(dir, 'ca.key');
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', caKey, '-out', caFile, '-days', '2', '-subj', `/CN=${name}`], dir);
  let serial = 0;
  return {
    dir,
    caFile,
    issue(leafName, altNames, opts = {}) {
      const base = join(dir, `${leafName}-${++serial}`);
      const ext = `${base}.ext`;
      writeFileSync(ext, `subjectAltName=${altNames.join(',')}\nextendedKeyUsage=serverAuth,clientAuth\nbasicConstraints=CA:FALSE\n`);
      openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${base}.key`, '-out', `${base}.csr`, '-subj', `/CN=${leafName}`], dir);
      openssl(['x509', '-req', '-in', `${base}.csr`, '-CA', caFile, '-CAkey', caKey, '-CAcreateserial', '-out', `${base}.pem`, '-days', String(opts.days ?? 2), '-extfile', ext], dir);
      writeFileSync(`${base}.bundle.pem`, readFileSync(`${base}.pem`, 'utf8') + readFileSync(`${base}.key`, 'utf8'));
      const fingerprint = openssl(['x509', '-in', `${base}.pem`, '-noout', '-fingerprint', '-sha256'], dir).trim().replace(/^.*=/, '');
      return { certFile: `${base}.pem`, keyFile: `${base}.key`, bundleFile: `${base}.bundle.pem`, fingerprint };
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
