import pino, { type Logger } from 'pino';

/** Secrets never reach the log, wherever they sit in a logged object. */
const REDACT = [
  'req.headers.authorization',
  'headers.authorization',
  '*.api_key',
  '*.apiKey',
  '*.sip_password',
  '*.password',
  '*.auth_token',
  '*.authToken',
  '*.calendar_api_key',
  '*.token',
  '*.secret',
  '*.webhookSecret',
  '*.webhook_secret',
];

/** `nodeId`: SWITCHBOARD_NODE_ID, on every line as `node`, so lines from several nodes can be told apart. */
export function createLogger(level: string, destination?: pino.DestinationStream, nodeId?: string): Logger {
  const base = nodeId === undefined ? { service: 'switchboard' } : { service: 'switchboard', node: nodeId };
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' }, base }, destination);
}
