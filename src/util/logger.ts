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

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' }, base: { service: 'switchboard' } }, destination);
}
