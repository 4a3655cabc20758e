/** Public face of the RFC 3261 §17 transaction layer; the pieces live in transaction-*.ts. */
export type { TxContext } from './transaction-base.ts';
export { ClientInviteTransaction, ClientNonInviteTransaction, buildAckForNon2xx } from './transaction-client.ts';
export { ServerInviteTransaction, ServerNonInviteTransaction } from './transaction-server.ts';
export { TransactionLayer } from './transaction-layer.ts';
export type {
  ClientTransaction,
  ClientTxHandlers,
  SendFn,
  ServerTransaction,
  TransactionLayerOptions,
  TransactionUser,
} from './transaction-layer.ts';
export { buildResponse, reasonPhrase } from './transaction-response.ts';
export type { ResponseOptions } from './transaction-response.ts';
export * from './transaction-types.ts';
export { clientKey, serverKey, newBranch, MAGIC_COOKIE } from './transaction-headers.ts';
