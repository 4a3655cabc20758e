/**
 * An S3-compatible server on loopback, for tests: path-style addressing (`/<bucket>/<key>`),
 * objects in memory, and the parts of the S3 REST protocol the engine uses, answered as S3 does
 * (status codes, XML error bodies, ETags, headers):
 *
 * - every request authenticated with AWS Signature Version 4 in the Authorization header,
 *   VERIFIED: the canonical request is rebuilt from what arrived and the signature recomputed
 *   with the test credentials (SignatureDoesNotMatch, InvalidAccessKeyId, AccessDenied,
 *   AuthorizationHeaderMalformed, RequestTimeTooSkewed); the signed payload hash
 *   (x-amz-content-sha256) is checked against the body (XAmzContentSHA256Mismatch);
 * - PutObject, GetObject (one Range: 206 + Content-Range, 416 InvalidRange), HeadObject,
 *   DeleteObject (204 whether or not the key exists), CreateBucket;
 * - multipart upload: CreateMultipartUpload, UploadPart, CompleteMultipartUpload (InvalidPart,
 *   InvalidPartOrder, EntityTooSmall under `minPartBytes` for all parts but the last; the
 *   `<md5 of part md5s>-<n>` ETag), AbortMultipartUpload, NoSuchUpload.
 *
 * Not implemented (501 NotImplemented): presigned (query-string) authentication, chunked
 * (`STREAMING-*`) payload signing, copies, listings, versioning; the engine uses none of them.
 *
 * Test controls: `stop()`/`restart()` take the server off the network and back on the same port
 * (an outage: connections refused meanwhile), `objectBytes(key)` reads what is stored,
 * `requests` lists what arrived.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface S3ServerOptions {
  credentials?: S3Credentials;
  region?: string;
  /** Buckets that exist from the start. */
  buckets?: string[];
  /** S3 refuses parts under 5 MiB except the last; tests of multipart logic may lower it. */
  minPartBytes?: number;
  /** Largest request body accepted (EntityTooLarge past it). */
  maxBodyBytes?: number;
}

interface StoredObject {
  data: Buffer;
  contentType: string;
  etag: string;
  lastModified: Date;
}

interface Upload {
  bucket: string;
  key: string;
  contentType: string;
  parts: Map<number, { data: Buffer; etag: string }>;
}

export interface S3Request {
  method: string;
  op: string;
  bucket?: string | undefined;
  key?: string | undefined;
  status: number;
  /** The S3 error code, when refused. */
  code?: string | undefined;
}

export const TEST_S3_CREDENTIALS: S3Credentials = { accessKeyId: 'AKIDSWITCHBOARDTEST', secretAccessKey: 'switchboard/test+secret/key0123456789abcd' };

class S3Error extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, string> = {},
  ) {
    super(message);
  }
}

const EMPTY_SHA256 = crypto.createHash('sha256').update('').digest('hex');

export class S3StandIn {
  readonly requests: S3Request[] = [];
  private readonly buckets = new Map<string, Map<string, StoredObject>>();
  private readonly uploads = new Map<string, Upload>();
  private readonly sockets = new Set<Socket>();
  private server: http.Server;
  private port = 0;
  readonly credentials: S3Credentials;
  readonly region: string;
  private readonly minPartBytes: number;
  private readonly maxBodyBytes: number;

  private constructor(opts: S3ServerOptions) {
    this.credentials = opts.credentials ?? TEST_S3_CREDENTIALS;
    this.region = opts.region ?? 'us-east-1';
    this.minPartBytes = opts.minPartBytes ?? 5 * 1024 * 1024;
    this.maxBodyBytes = opts.maxBodyBytes ?? 64 * 1024 * 1024;
    for (const b of opts.buckets ?? []) this.buckets.set(b, new Map());
    this.server = this.makeServer();
  }

  static async start(opts: S3ServerOptions = {}): Promise<S3StandIn> {
    const s = new S3StandIn(opts);
    await s.listen(0);
    return s;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The environment the engine reads to use this server. */
  env(bucket: string): Record<string, string> {
    return {
      SWITCHBOARD_S3_ENDPOINT: this.endpoint,
      SWITCHBOARD_S3_BUCKET: bucket,
      SWITCHBOARD_S3_REGION: this.region,
      AWS_ACCESS_KEY_ID: this.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: this.credentials.secretAccessKey,
    };
  }

  objectBytes(bucket: string, key: string): Buffer | undefined {
    return this.buckets.get(bucket)?.get(key)?.data;
  }

  keys(bucket: string): string[] {
    return [...(this.buckets.get(bucket)?.keys() ?? [])].sort();
  }

  /** Multipart uploads begun and neither completed nor aborted. */
  get openUploads(): number {
    return this.uploads.size;
  }

  /** Off the network: the port refuses connections, open ones are cut. Objects are kept. */
  async stop(): Promise<void> {
    const closed = new Promise<void>((r) => this.server.close(() => r()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  /** Back on the same port. */
  async restart(): Promise<void> {
    this.server = this.makeServer();
    await this.listen(this.port);
  }

  async close(): Promise<void> {
    if (this.server.listening) await this.stop();
  }

  private async listen(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  private makeServer(): http.Server {
    const server = http.createServer((req, res) => void this.handle(req, res));
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    return server;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const requestId = crypto.randomBytes(8).toString('hex').toUpperCase();
    const url = new URL(req.url ?? '/', 'http://s3.local');
    const rawPath = (req.url ?? '/').split('?')[0]!;
    const segments = rawPath.split('/').slice(1);
    const bucket = segments[0] ? decodeURIComponent(segments[0]) : undefined;
    const key = segments.length > 1 ? segments.slice(1).map(decodeURIComponent).join('/') : undefined;
    const q = url.searchParams;
    const method = req.method ?? 'GET';
    const op = opName(method, key, q);
    const entry: S3Request = { method, op, bucket, key, status: 0 };
    this.requests.push(entry);
    res.setHeader('x-amz-request-id', requestId);
    try {
      const body = await readBody(req, this.maxBodyBytes);
      this.authenticate(req, rawPath, url, body);
      const out = this.dispatch(op, method, bucket, key, q, req, body, res);
      entry.status = out;
    } catch (err) {
      const e = err instanceof S3Error ? err : new S3Error(500, 'InternalError', (err as Error).message);
      entry.status = e.status;
      entry.code = e.code;
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res.statusCode = e.status;
      for (const [h, v] of Object.entries(e.extra)) if (h.startsWith('header:')) res.setHeader(h.slice(7), v);
      if (method === 'HEAD') {
        res.end();
        return;
      }
      const fields = Object.entries(e.extra)
        .filter(([h]) => !h.startsWith('header:'))
        .map(([k, v]) => `<${k}>${xmlEscape(v)}</${k}>`)
        .join('');
      const resource = bucket ? `/${bucket}${key ? `/${key}` : ''}` : '/';
      res.setHeader('Content-Type', 'application/xml');
      res.end(
        `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${e.code}</Code><Message>${xmlEscape(e.message)}</Message>${fields}<Resource>${xmlEscape(resource)}</Resource><RequestId>${requestId}</RequestId></Error>`,
      );
    }
  }

  // ---- SigV4 (Authorization header) -------------------------------------------------------

  private authenticate(req: http.IncomingMessage, rawPath: string, url: URL, body: Buffer): void {
    if (url.searchParams.has('X-Amz-Signature') || url.searchParams.has('X-Amz-Credential')) {
      throw new S3Error(501, 'NotImplemented', 'Query-string (presigned) authentication is not implemented by this server.');
    }
    const auth = header(req, 'authorization');
    if (!auth) throw new S3Error(403, 'AccessDenied', 'Access Denied');
    const m = /^AWS4-HMAC-SHA256\s+Credential=([^,\s]+)\s*,\s*SignedHeaders=([^,\s]+)\s*,\s*Signature=([0-9a-f]{64})\s*$/.exec(auth);
    if (!m) throw new S3Error(400, 'AuthorizationHeaderMalformed', 'The authorization header is malformed.');
    const [accessKeyId, date, region, service, terminator] = m[1]!.split('/');
    if (accessKeyId !== this.credentials.accessKeyId) throw new S3Error(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.', { AWSAccessKeyId: accessKeyId ?? '' });
    if (region !== this.region) throw new S3Error(400, 'AuthorizationHeaderMalformed', `The authorization header is malformed; the region '${region}' is wrong; expecting '${this.region}'`, { Region: this.region });
    if (service !== 's3' || terminator !== 'aws4_request' || !/^\d{8}$/.test(date ?? '')) throw new S3Error(400, 'AuthorizationHeaderMalformed', 'The authorization header is malformed; the credential scope is invalid.');
    const amzDate = header(req, 'x-amz-date');
    if (!amzDate || !/^\d{8}T\d{6}Z$/.test(amzDate)) throw new S3Error(403, 'AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header');
    if (amzDate.slice(0, 8) !== date) throw new S3Error(400, 'AuthorizationHeaderMalformed', 'The authorization header is malformed; the credential date does not match x-amz-date.');
    const at = Date.UTC(+amzDate.slice(0, 4), +amzDate.slice(4, 6) - 1, +amzDate.slice(6, 8), +amzDate.slice(9, 11), +amzDate.slice(11, 13), +amzDate.slice(13, 15));
    if (Math.abs(Date.now() - at) > 15 * 60_000) throw new S3Error(403, 'RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.');
    const signedHeaders = m[2]!.split(';');
    if (!signedHeaders.includes('host')) throw new S3Error(400, 'AuthorizationHeaderMalformed', 'The host header must be signed.');
    const payloadHash = header(req, 'x-amz-content-sha256');
    if (!payloadHash) throw new S3Error(400, 'InvalidRequest', 'Missing required header for this request: x-amz-content-sha256');
    if (payloadHash.startsWith('STREAMING-')) throw new S3Error(501, 'NotImplemented', 'Chunked payload signing is not implemented by this server.');
    if (payloadHash !== 'UNSIGNED-PAYLOAD') {
      const actual = body.length === 0 ? EMPTY_SHA256 : crypto.createHash('sha256').update(body).digest('hex');
      if (actual !== payloadHash) {
        throw new S3Error(400, 'XAmzContentSHA256Mismatch', "The provided 'x-amz-content-sha256' header does not match what was computed.", { ClientComputedContentSHA256: payloadHash, S3ComputedContentSHA256: actual });
      }
    }
    const canonicalHeaders = signedHeaders.map((h) => `${h}:${canonicalHeaderValue(req, h)}\n`).join('');
    const canonicalRequest = [req.method ?? 'GET', canonicalUri(rawPath), canonicalQuery(url), canonicalHeaders, signedHeaders.join(';'), payloadHash].join('\n');
    const scope = `${date}/${region}/s3/aws4_request`;
    const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
    const kDate = hmac(`AWS4${this.credentials.secretAccessKey}`, date!);
    const kSigning = hmac(hmac(hmac(kDate, region!), 's3'), 'aws4_request');
    const expected = hmac(kSigning, stringToSign).toString('hex');
    const given = m[3]!;
    if (!crypto.timingSafeEqual(Buffer.from(expected), Buffer.from(given))) {
      throw new S3Error(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.', {
        AWSAccessKeyId: accessKeyId,
        StringToSign: stringToSign,
      });
    }
  }

  // ---- operations --------------------------------------------------------------------------

  private dispatch(op: string, method: string, bucket: string | undefined, key: string | undefined, q: URLSearchParams, req: http.IncomingMessage, body: Buffer, res: http.ServerResponse): number {
    if (!bucket) throw new S3Error(501, 'NotImplemented', 'ListBuckets is not implemented by this server.');
    if (op === 'CreateBucket') {
      if (this.buckets.has(bucket)) throw new S3Error(409, 'BucketAlreadyOwnedByYou', 'Your previous request to create the named bucket succeeded and you already own it.', { BucketName: bucket });
      this.buckets.set(bucket, new Map());
      res.setHeader('Location', `/${bucket}`);
      return send(res, 200);
    }
    const objects = this.buckets.get(bucket);
    if (!objects) throw new S3Error(404, 'NoSuchBucket', 'The specified bucket does not exist', { BucketName: bucket });
    if (!key) throw new S3Error(501, 'NotImplemented', `${method} on a bucket is not implemented by this server.`);
    switch (op) {
      case 'PutObject': {
        if (header(req, 'x-amz-copy-source')) throw new S3Error(501, 'NotImplemented', 'CopyObject is not implemented by this server.');
        checkContentMd5(req, body);
        const obj: StoredObject = { data: body, contentType: header(req, 'content-type') ?? 'binary/octet-stream', etag: `"${md5Hex(body)}"`, lastModified: new Date() };
        objects.set(key, obj);
        res.setHeader('ETag', obj.etag);
        return send(res, 200);
      }
      case 'GetObject':
      case 'HeadObject': {
        const obj = objects.get(key);
        if (!obj) throw new S3Error(404, 'NoSuchKey', 'The specified key does not exist.', { Key: key });
        res.setHeader('ETag', obj.etag);
        res.setHeader('Last-Modified', obj.lastModified.toUTCString());
        res.setHeader('Content-Type', obj.contentType);
        res.setHeader('Accept-Ranges', 'bytes');
        const range = parseRange(header(req, 'range'), obj.data.length);
        if (range === 'invalid') {
          throw new S3Error(416, 'InvalidRange', 'The requested range is not satisfiable', { RangeRequested: header(req, 'range') ?? '', ActualObjectSize: String(obj.data.length) });
        }
        const slice = range ? obj.data.subarray(range.start, range.end + 1) : obj.data;
        if (range) res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${obj.data.length}`);
        res.setHeader('Content-Length', slice.length);
        res.statusCode = range ? 206 : 200;
        res.end(op === 'HeadObject' ? undefined : slice);
        return res.statusCode;
      }
      case 'DeleteObject':
        objects.delete(key);
        return send(res, 204);
      case 'CreateMultipartUpload': {
        const uploadId = crypto.randomBytes(24).toString('base64url');
        this.uploads.set(uploadId, { bucket, key, contentType: header(req, 'content-type') ?? 'binary/octet-stream', parts: new Map() });
        return sendXml(res, 200, `<InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>${xmlEscape(bucket)}</Bucket><Key>${xmlEscape(key)}</Key><UploadId>${uploadId}</UploadId></InitiateMultipartUploadResult>`);
      }
      case 'UploadPart': {
        const upload = this.upload(q.get('uploadId'), bucket, key);
        const n = Number(q.get('partNumber'));
        if (!Number.isInteger(n) || n < 1 || n > 10_000) throw new S3Error(400, 'InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive', { ArgumentName: 'partNumber', ArgumentValue: q.get('partNumber') ?? '' });
        checkContentMd5(req, body);
        const etag = `"${md5Hex(body)}"`;
        upload.parts.set(n, { data: body, etag });
        res.setHeader('ETag', etag);
        return send(res, 200);
      }
      case 'CompleteMultipartUpload': {
        const uploadId = q.get('uploadId');
        const upload = this.upload(uploadId, bucket, key);
        const listed = [...body.toString('utf8').matchAll(/<Part>([\s\S]*?)<\/Part>/g)].map((p) => ({
          n: Number(/<PartNumber>\s*(\d+)\s*<\/PartNumber>/.exec(p[1]!)?.[1]),
          etag: /<ETag>\s*([^<]*?)\s*<\/ETag>/.exec(p[1]!)?.[1]?.replace(/&quot;/g, '"'),
        }));
        if (listed.length === 0) throw new S3Error(400, 'MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema.');
        const parts: Buffer[] = [];
        const md5s: Buffer[] = [];
        listed.forEach((p, i) => {
          if (i > 0 && p.n <= listed[i - 1]!.n) throw new S3Error(400, 'InvalidPartOrder', 'The list of parts was not in ascending order. Parts must be ordered by part number.', { UploadId: uploadId ?? '' });
          const stored = upload.parts.get(p.n);
          const etag = p.etag?.startsWith('"') ? p.etag : `"${p.etag}"`;
          if (!stored || stored.etag !== etag) throw new S3Error(400, 'InvalidPart', 'One or more of the specified parts could not be found. The part might not have been uploaded, or the specified entity tag might not have matched the part\'s entity tag.', { UploadId: uploadId ?? '', PartNumber: String(p.n) });
          if (i < listed.length - 1 && stored.data.length < this.minPartBytes) {
            throw new S3Error(400, 'EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed object size.', { ProposedSize: String(stored.data.length), MinSizeAllowed: String(this.minPartBytes), PartNumber: String(p.n) });
          }
          parts.push(stored.data);
          md5s.push(Buffer.from(stored.etag.slice(1, -1), 'hex'));
        });
        const data = Buffer.concat(parts);
        const etag = `"${md5Hex(Buffer.concat(md5s))}-${parts.length}"`;
        objects.set(key, { data, contentType: upload.contentType, etag, lastModified: new Date() });
        this.uploads.delete(uploadId!);
        return sendXml(res, 200, `<CompleteMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Location>${this.endpoint}/${xmlEscape(bucket)}/${xmlEscape(key)}</Location><Bucket>${xmlEscape(bucket)}</Bucket><Key>${xmlEscape(key)}</Key><ETag>${xmlEscape(etag)}</ETag></CompleteMultipartUploadResult>`);
      }
      case 'AbortMultipartUpload': {
        this.upload(q.get('uploadId'), bucket, key);
        this.uploads.delete(q.get('uploadId')!);
        return send(res, 204);
      }
      default:
        throw new S3Error(501, 'NotImplemented', `${op} is not implemented by this server.`);
    }
  }

  private upload(uploadId: string | null, bucket: string, key: string): Upload {
    const u = uploadId ? this.uploads.get(uploadId) : undefined;
    if (!u || u.bucket !== bucket || u.key !== key) {
      throw new S3Error(404, 'NoSuchUpload', 'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.', { UploadId: uploadId ?? '' });
    }
    return u;
  }
}

function opName(method: string, key: string | undefined, q: URLSearchParams): string {
  if (!key) return method === 'PUT' ? 'CreateBucket' : `${method}Bucket`;
  if (method === 'POST' && q.has('uploads')) return 'CreateMultipartUpload';
  if (method === 'POST' && q.has('uploadId')) return 'CompleteMultipartUpload';
  if (method === 'PUT' && q.has('uploadId')) return 'UploadPart';
  if (method === 'DELETE' && q.has('uploadId')) return 'AbortMultipartUpload';
  if (method === 'PUT') return 'PutObject';
  if (method === 'GET') return 'GetObject';
  if (method === 'HEAD') return 'HeadObject';
  if (method === 'DELETE') return 'DeleteObject';
  return `${method}Object`;
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

/** SigV4: the value trimmed, inner runs of spaces folded to one; repeated headers joined by commas. */
function canonicalHeaderValue(req: http.IncomingMessage, name: string): string {
  const values: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]!.toLowerCase() === name) values.push(req.rawHeaders[i + 1]!.trim().replace(/\s+/g, ' '));
  }
  return values.join(',');
}

/** RFC 3986 unreserved characters stay; everything else is %XX, upper case (SigV4's UriEncode). */
function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** S3 signs the path encoded once (no normalisation): each segment decoded, then UriEncoded. */
function canonicalUri(rawPath: string): string {
  return rawPath
    .split('/')
    .map((seg) => uriEncode(decodeURIComponent(seg)))
    .join('/');
}

function canonicalQuery(url: URL): string {
  const raw = url.search.startsWith('?') ? url.search.slice(1) : '';
  if (!raw) return '';
  return raw
    .split('&')
    .filter((p) => p.length > 0)
    .map((p) => {
      const i = p.indexOf('=');
      const k = decodeURIComponent((i < 0 ? p : p.slice(0, i)).replace(/\+/g, '%20'));
      const v = i < 0 ? '' : decodeURIComponent(p.slice(i + 1).replace(/\+/g, '%20'));
      return [uriEncode(k), uriEncode(v)] as const;
    })
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

function hmac(key: string | Buffer, data: string): Buffer {
  return crypto.createHmac('sha256', key).update(data, 'utf8').digest();
}

function sha256Hex(s: string): string {
  return crypto.createHash('sha256').update(s, 'utf8').digest('hex');
}

function md5Hex(b: Buffer): string {
  return crypto.createHash('md5').update(b).digest('hex');
}

function checkContentMd5(req: http.IncomingMessage, body: Buffer): void {
  const given = header(req, 'content-md5');
  if (given !== undefined && given !== crypto.createHash('md5').update(body).digest('base64')) {
    throw new S3Error(400, 'BadDigest', 'The Content-MD5 you specified did not match what we received.');
  }
}

/** One `bytes=` range as S3 reads it: undefined (whole object), a range, or `invalid` (416). */
function parseRange(value: string | undefined, size: number): { start: number; end: number } | undefined | 'invalid' {
  if (!value) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(value.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0 || size === 0) return 'invalid';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return undefined;
  if (start >= size) return 'invalid';
  return { start, end };
}

async function readBody(req: http.IncomingMessage, max: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > max) {
    req.resume();
    throw new S3Error(400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size', { ProposedSize: String(declared), MaxSizeAllowed: String(max) });
  }
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    n += c.length;
    if (n > max) throw new S3Error(400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size', { MaxSizeAllowed: String(max) });
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

function send(res: http.ServerResponse, status: number): number {
  res.statusCode = status;
  res.end();
  return status;
}

function sendXml(res: http.ServerResponse, status: number, xml: string): number {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/xml');
  res.end(`<?xml version="1.0" encoding="UTF-8"?>\n${xml}`);
  return status;
}

function xmlEscape(s: string): string {
  return s.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);
}
