import type { AppContext } from '../context.ts';
import { limiterFor } from '../cluster/limiter-for.ts';
import type { RateLimiter } from '../api/rate-limit.ts';
import type { AssistantRecord } from '../store/repos/assistants.ts';
import type { Conversation } from '../store/repos/conversations.ts';
import type { WhatsappSender } from '../store/repos/whatsapp-senders.ts';
import type { EventPublisher } from '../webhooks/events.ts';
import { AppError } from '../util/errors.ts';
import { inactivityMs, type ConversationService } from './conversation-service.ts';
import { WHATSAPP_FREEFORM_PRICE_MICROS } from '../billing/prices.ts';
import type { TwilioClient } from './twilio.ts';
import { isE164, sessionStatus } from './whatsapp-session.ts';
import type { TurnResult } from '../agent/types.ts';
import { assertChatModelConfigured, describeChatFailure } from './provider-failure.ts';
import { createRepos } from '../store/index.ts';
import { inTransaction, lockKey } from '../store/dialect.ts';

const DEFAULT_INACTIVITY_MS = 30 * 60_000;
const BALANCE_MESSAGE = 'Insufficient balance. Please top up your account to send WhatsApp messages.';

export function senderNotFound(): AppError {
  return new AppError('WhatsApp sender not found.', 404, 'SENDER_NOT_FOUND');
}

export function invalidPhone(): AppError {
  return new AppError('The recipient phone must be an E.164 international number, e.g. +14155550123.', 422, 'INVALID_PHONE');
}

/**
 * WhatsApp through the sender's Twilio account: inbound customer messages (with AI replies),
 * delivery status callbacks, session status and freeform sends. AI replies run after the webhook
 * has been answered; they are tracked so shutdown (and tests) can wait for them.
 */
export class WhatsAppService {
  private readonly tasks = new Set<Promise<void>>();
  /** The spec's 5 freeform sends per second per account (service-wide when the cluster is shared). */
  private readonly freeformLimiter: RateLimiter;

  constructor(
    private readonly ctx: AppContext,
    private readonly conversations: ConversationService,
    private readonly events: EventPublisher,
    private readonly twilio: TwilioClient,
  ) {
    this.freeformLimiter = limiterFor(ctx.cluster, 'whatsapp-freeform', [{ limit: 5, windowMs: 1_000 }]);
  }

  /** Where Twilio posts delivery updates for messages we send. */
  statusCallbackUrl(senderId: number): string {
    return `${this.ctx.config.publicUrl}/api/webhooks/whatsapp/${senderId}/status`;
  }

  async idle(): Promise<void> {
    while (this.tasks.size > 0) await Promise.allSettled([...this.tasks]);
  }

  /**
   * A customer wrote. Stores the message (opening the 24-hour window) and lets the AI answer.
   * The duplicate check, find-or-create of the conversation and the insert are one transaction:
   * two webhooks arriving together (a customer's quick second message, or a Twilio retry) can
   * neither split the customer across two conversations nor store one message twice.
   */
  async inbound(sender: WhatsappSender, params: Record<string, string>): Promise<void> {
    const phone = (params.From ?? '').replace(/^whatsapp:/, '');
    const text = params.Body ?? '';
    const sid = params.MessageSid ?? null;
    if (!isE164(phone)) return;
    const assistant = sender.assistantId !== null ? await this.ctx.repos.assistants.getById(sender.assistantId) : undefined;
    const limitMs = assistant ? inactivityMs(assistant) : DEFAULT_INACTIVITY_MS;
    const stored = await inTransaction(this.ctx.store, async (tx) => {
      const { conversations, messages } = createRepos(tx, this.ctx.clock, this.ctx.secrets);
      // One customer of one sender at a time (PostgreSQL: other nodes' webhooks wait here).
      await lockKey(tx.db, tx.dialect, `whatsapp-inbound:${sender.id}:${phone}`);
      // Twilio retries a webhook it thinks failed; the same message must not be answered twice.
      if (sid && (await messages.findBySid(sid))) return undefined;
      let conv = await conversations.latestWhatsapp(sender.id, phone);
      if (!conv) {
        conv = await conversations.create({
          accountId: sender.accountId,
          assistantId: sender.assistantId ?? 0,
          type: 'whatsapp',
          whatsappSenderId: sender.id,
          customerPhone: phone,
          customerName: params.ProfileName || null,
          inactivityMs: limitMs,
        });
      } else if (params.ProfileName && params.ProfileName !== conv.customerName) {
        await conversations.setCustomerName(conv.id, params.ProfileName);
      }
      let aiMayAnswer = conv.aiEnabled && assistant !== undefined && sender.status === 'online';
      if (conv.status === 'ended') {
        // Without retrigger an ended conversation stays ended: the message is still recorded (it
        // opens the WhatsApp window for a human) but the AI does not answer.
        if (assistant?.config.conversation_ended_retrigger) await conversations.reopen(conv.id, limitMs);
        else aiMayAnswer = false;
      }
      await messages.append({
        conversationId: conv.id,
        messages: [{ role: 'user', content: text, providerSid: sid, deliveryStatus: 'received' }],
        inactivityMs: limitMs,
      });
      return { conversationId: conv.id, aiMayAnswer };
    });
    if (stored?.aiMayAnswer && assistant && text.trim() !== '') this.track(this.aiReply(stored.conversationId, sender, assistant));
  }

  private track(p: Promise<void>): void {
    const task = p.catch((err: unknown) => {
      const cause = err instanceof Error ? err.message : String(err);
      this.ctx.logger.error({ cause }, `whatsapp AI reply failed: ${cause}`);
    });
    this.tasks.add(task);
    void task.finally(() => this.tasks.delete(task));
  }

  private async aiReply(conversationId: number, sender: WhatsappSender, assistant: AssistantRecord): Promise<void> {
    const conv = await this.ctx.repos.conversations.getById(conversationId);
    if (!conv) return;
    if (!await this.ctx.repos.ledger.covers(conv.accountId, WHATSAPP_FREEFORM_PRICE_MICROS)) {
      this.ctx.logger.warn({ conversationId }, 'no AI reply on WhatsApp: balance too low');
      return;
    }
    let turn: TurnResult;
    try {
      assertChatModelConfigured(this.ctx, assistant);
      turn = await this.conversations.runTurn(conv, assistant, null);
    } catch (err) {
      // No HTTP answer is waiting (Twilio's webhook was answered already): the log says why.
      const cause = describeChatFailure(this.ctx, err);
      this.ctx.logger.error({ conversationId, senderId: sender.id, assistantId: assistant.id, cause }, `whatsapp AI reply failed: ${cause}`);
      return;
    }
    // A human may have taken over while the model was thinking.
    const now = await this.ctx.repos.conversations.getById(conversationId);
    if (!now?.aiEnabled || turn.reply.trim() === '') return;
    await this.deliver(now, sender, turn.reply, 'assistant', turn.functionCalls, 'whatsapp ai reply');
    if (turn.ended) await this.conversations.end(now, assistant, 'assistant');
  }

  /**
   * Charges and stores an outgoing message in one transaction, then sends it; a failed send is
   * refunded and marked failed. Returns the stored message id and the provider's SID.
   */
  private async deliver(
    conv: Conversation,
    sender: WhatsappSender,
    text: string,
    role: 'assistant' | 'agent',
    functionCalls: { name: string; arguments: Record<string, unknown>; result: Record<string, unknown> }[],
    reason: string,
  ): Promise<{ messageId: number; sid: string }> {
    const assistant = await this.ctx.repos.assistants.getById(conv.assistantId);
    const stored = await this.ctx.repos.messages.append({
      conversationId: conv.id,
      messages: [{ role, content: text, functionCalls, deliveryStatus: 'queued' }],
      charge: { accountId: conv.accountId, micros: WHATSAPP_FREEFORM_PRICE_MICROS, reason, reference: `conversation:${conv.uuid}` },
      inactivityMs: assistant ? inactivityMs(assistant) : DEFAULT_INACTIVITY_MS,
    });
    const messageId = stored.ids[0];
    if (!stored.charged || messageId === undefined) throw new AppError(BALANCE_MESSAGE, 402, 'INSUFFICIENT_BALANCE');
    try {
      const sent = await this.twilio.send({
        accountSid: sender.accountSid,
        authToken: sender.authToken,
        from: sender.phone,
        to: conv.customerPhone ?? '',
        body: text,
        statusCallback: this.statusCallbackUrl(sender.id),
      });
      await this.ctx.repos.messages.setProviderSid(messageId, sent.sid, sent.status);
      return { messageId, sid: sent.sid };
    } catch (err) {
      await this.ctx.repos.messages.setDeliveryStatus(messageId, 'failed');
      await this.ctx.repos.ledger.adjust(conv.accountId, WHATSAPP_FREEFORM_PRICE_MICROS, 'refund: whatsapp send failed', `message:${messageId}`);
      throw new AppError(`Failed to send the WhatsApp message: ${(err as Error).message}`, 502, 'PROVIDER_FAILED', true);
    }
  }

  /** Twilio's delivery updates (sent, delivered, read, failed) for a message we sent. */
  async statusUpdate(sender: WhatsappSender, params: Record<string, string>): Promise<void> {
    const sid = params.MessageSid ?? params.SmsSid;
    const status = params.MessageStatus ?? params.SmsStatus;
    if (!sid || !status) return;
    const msg = await this.ctx.repos.messages.findBySid(sid);
    if (!msg) return;
    const conv = await this.ctx.repos.conversations.getById(msg.conversationId);
    if (!conv || conv.whatsappSenderId !== sender.id) return;
    await this.ctx.repos.messages.setDeliveryStatus(msg.id, status);
    const assistant = await this.ctx.repos.assistants.getById(conv.assistantId);
    const url = assistant && receiptUrl(assistant);
    if (url) {
      await this.events.publish(conv.accountId, url, 'message.read_receipt', {
        conversation_id: conv.id,
        conversation_uuid: conv.uuid,
        message_id: msg.id,
        message_sid: sid,
        status,
        sender_id: sender.id,
        recipient_phone: conv.customerPhone,
        ...(params.ErrorCode ? { error_code: params.ErrorCode } : {}),
      });
    }
  }

  async sessionStatusFor(accountId: number, senderId: number, phone: string) {
    if (!isE164(phone)) throw invalidPhone();
    const sender = await this.ctx.repos.whatsappSenders.get(accountId, senderId);
    if (!sender) throw senderNotFound();
    const conv = await this.ctx.repos.conversations.latestWhatsapp(sender.id, phone);
    const status = sessionStatus(conv?.lastCustomerMessageAt ?? null, this.ctx.clock.now());
    if (!conv) return { success: true, has_conversation: false, session_status: status };
    return {
      success: true,
      has_conversation: true,
      session_status: status,
      conversation_id: conv.id,
      ...(conv.customerName ? { customer_name: conv.customerName } : {}),
      ...(conv.lastCustomerMessageAt !== null ? { last_customer_message_at: new Date(conv.lastCustomerMessageAt).toISOString() } : {}),
    };
  }

  /** The spec's order: rate, phone, sender (exists, online), open session, balance. */
  async sendFreeform(accountId: number, input: { sender_id: number; recipient_phone: string; message: string }) {
    const rate = await this.freeformLimiter.hit(`freeform:${accountId}`, this.ctx.clock.now());
    if (!rate.allowed) {
      throw new AppError('Too many requests.', 429, 'RATE_LIMITED', true, { message: 'Too many requests.', retry_after: rate.retryAfterSec });
    }
    if (!isE164(input.recipient_phone)) throw invalidPhone();
    const sender = await this.ctx.repos.whatsappSenders.get(accountId, input.sender_id);
    if (!sender) throw senderNotFound();
    if (sender.status !== 'online') throw new AppError('The WhatsApp sender is offline.', 503, 'SENDER_OFFLINE');
    const conv = await this.ctx.repos.conversations.latestWhatsapp(sender.id, input.recipient_phone);
    const before = sessionStatus(conv?.lastCustomerMessageAt ?? null, this.ctx.clock.now());
    if (!conv || !before.can_send_freeform) {
      throw new AppError('The 24-hour session is closed: send a template message instead.', 403, 'SESSION_EXPIRED', false, { session_status: before });
    }
    if (!await this.ctx.repos.ledger.covers(accountId, WHATSAPP_FREEFORM_PRICE_MICROS)) throw new AppError(BALANCE_MESSAGE, 402, 'INSUFFICIENT_BALANCE');
    const sent = await this.deliver(conv, sender, input.message, 'agent', [], 'whatsapp freeform');
    return {
      success: true,
      conversation_id: conv.id,
      message_id: sent.messageId,
      // One table holds both: the WhatsApp message is the conversation message.
      whatsapp_message_id: sent.messageId,
      message_sid: sent.sid,
      session_status: sessionStatus(conv.lastCustomerMessageAt, this.ctx.clock.now()),
    };
  }
}

/** Read receipts go to the assistant's event webhook, else to its chat (conversation-ended) URL. */
function receiptUrl(assistant: AssistantRecord): string | undefined {
  const cfg = assistant.config;
  if (cfg.is_webhook_active && cfg.webhook_url) return cfg.webhook_url;
  return cfg.conversation_ended_webhook_url ?? undefined;
}
