import type { SipRequest, SipResponse } from '../../../src/sip/message.ts';
import { buildResponse } from '../../../src/sip/transaction-response.ts';

export function request(method: string, opts: { branch?: string; cseq?: number; cseqMethod?: string; toTag?: string } = {}): SipRequest {
  const branch = opts.branch ?? 'z9hG4bKabc123';
  return {
    kind: 'request',
    method,
    uri: 'sip:bob@127.0.0.1:5070',
    version: 'SIP/2.0',
    headers: [
      { name: 'via', value: `SIP/2.0/UDP 127.0.0.1:5060;branch=${branch};rport` },
      { name: 'max-forwards', value: '70' },
      { name: 'from', value: '<sip:alice@127.0.0.1>;tag=fromtag' },
      { name: 'to', value: `<sip:bob@127.0.0.1>${opts.toTag ? `;tag=${opts.toTag}` : ''}` },
      { name: 'call-id', value: 'call-1@127.0.0.1' },
      { name: 'cseq', value: `${opts.cseq ?? 1} ${opts.cseqMethod ?? method}` },
      { name: 'content-length', value: '0' },
    ],
    body: Buffer.alloc(0),
  };
}

export function response(req: SipRequest, status: number): SipResponse {
  return buildResponse(req, status, { toTag: status > 100 ? 'totag' : undefined });
}
