import type { AppContext } from '../context.ts';
import type { Agent } from '../agent/run-turn.ts';
import { initialMessage } from '../agent/prompt.ts';
import { mergeVariables } from '../agent/template.ts';
import type { TurnResult } from '../agent/types.ts';
import type { AssistantRecord } from '../store/repos/assistants.ts';
import type { Conversation } from '../store/repos/conversations.ts';
import type { EventPublisher } from '../webhooks/events.ts';
import { AppError, NotFoundError } from '../util/errors.ts';
import { historyView, turnHistory } from './history.ts';
import { WIDGET_MESSAGE_PRICE_MICROS } from '../billing/prices.ts';
import { textBuiltinTools } from './text-tools.ts';
import { assertChatModelConfigured, chatFailureDetail, describeChatFailure, GENERIC_CHAT_FAILURE } from './provider-failure.ts';
import { createRepos } from '../store/index.ts';
import { inTransaction } from '../store/dialect.ts';

export const TOP_UP_MESSAGE = 'Insufficient balance. Please top up your account to continue.';
const DEFAULT_INACTIVITY_MINUTES = 30;

export function inactivityMs(assistant: AssistantRecord): number {
  return (assistant.config.conversation_inactivity_timeout ?? DEFAULT_INACTIVITY_MINUTES) * 60_000;
}

/**
 * Chat conversations (widget, test, generate-reply, WhatsApp): creation, history, customer turns,
 * hand-over, and the end of a conversation. Routes map its errors to each endpoint's body shape.
 */
export class ConversationService {
  constructor(
    private readonly ctx: AppContext,
    private readonly agent: Agent,
    private readonly events: EventPublisher,
  ) {}

  /** `accountId` 0: no key was sent and the assistant's UUID is the capability. */
  async create(accountId: number, assistantUuid: string, type: 'widget' | 'test', variables: Record<string, unknown> | null | undefined) {
    const assistant = await this.ctx.repos.assistants.getByUuid(assistantUuid);
    if (!assistant || (accountId !== 0 && assistant.accountId !== accountId)) throw new NotFoundError('Assistant');
    if (type === 'widget' && !await this.ctx.repos.ledger.covers(assistant.accountId, WIDGET_MESSAGE_PRICE_MICROS)) {
      throw new AppError(TOP_UP_MESSAGE, 400, 'INSUFFICIENT_BALANCE');
    }
    const vars = mergeVariables(assistant.config.variables, variables);
    const opening = initialMessage(assistant.config, vars);
    const conv = await this.ctx.repos.conversations.create(
      { accountId: assistant.accountId, assistantId: assistant.id, type, variables: variables ?? null, inactivityMs: inactivityMs(assistant) },
      opening || undefined,
    );
    return { status: true, conversation_id: conv.uuid, history: historyView(await this.ctx.repos.messages.list(conv.id)) };
  }

  /** A conversation the caller may see: any with no key (UUID as capability), else the account's. */
  async find(accountId: number, uuid: string): Promise<Conversation> {
    const conv = await this.ctx.repos.conversations.getByUuid(uuid);
    if (!conv || (accountId !== 0 && conv.accountId !== accountId)) throw new NotFoundError('Conversation');
    return conv;
  }

  async view(accountId: number, uuid: string) {
    const conv = await this.find(accountId, uuid);
    const out: Record<string, unknown> = {
      status: true,
      history: historyView(await this.ctx.repos.messages.list(conv.id)),
      variables: conv.variables,
    };
    if (conv.externalIdentifier) out.external_identifier = conv.externalIdentifier;
    if (conv.whatsappSenderId !== null) {
      const sender = await this.ctx.repos.whatsappSenders.getById(conv.whatsappSenderId);
      if (sender) out.whatsapp_sender = { name: sender.name, phone: sender.phone };
      out.customer = { name: conv.customerName, phone: conv.customerPhone };
    }
    return out;
  }

  /** POST /conversations/{uuid}/messages. */
  async sendMessage(accountId: number, uuid: string, message: string) {
    const conv = await this.find(accountId, uuid);
    const assistant = await this.assistantOf(conv);
    await this.ensureOpen(conv, assistant, 400);
    const price = conv.type === 'test' ? 0 : WIDGET_MESSAGE_PRICE_MICROS;
    const ledger = this.ctx.repos.ledger;
    if (!conv.aiEnabled) {
      // A human has taken over: the message is kept for them, no reply, nothing billed.
      await this.ctx.repos.messages.append({ conversationId: conv.id, messages: [{ role: 'user', content: message }], inactivityMs: inactivityMs(assistant) });
      return { status: true, message: '', function_calls: [] };
    }
    if (price > 0 && !await ledger.covers(conv.accountId, price)) throw new AppError(TOP_UP_MESSAGE, 400, 'INSUFFICIENT_BALANCE');
    let turn: TurnResult;
    try {
      assertChatModelConfigured(this.ctx, assistant);
      turn = await this.runTurn(conv, assistant, message);
    } catch (err) {
      const detail = chatFailureDetail(this.ctx, err);
      this.ctx.logger.warn({ conversationId: conv.id, conversationUuid: conv.uuid, keyless: accountId === 0 }, `chat reply failed: ${detail}`);
      // Anonymous widget users (no API key) are not told vendor text, endpoints or settings.
      const told = accountId === 0 ? GENERIC_CHAT_FAILURE : describeChatFailure(this.ctx, err);
      throw new AppError(`Failed to process message: ${told}`, 400, 'PROCESSING_FAILED');
    }
    const stored = await this.storeTurn(conv, assistant, message, turn, price > 0 ? { micros: price, reason: 'widget message' } : undefined);
    if (!stored) throw new AppError(TOP_UP_MESSAGE, 400, 'INSUFFICIENT_BALANCE');
    if (turn.ended) await this.end(conv, assistant, 'assistant');
    return { status: true, message: turn.reply, function_calls: turn.functionCalls };
  }

  async setAiEnabled(accountId: number, uuid: string, enabled: boolean) {
    if (!(await this.ctx.repos.conversations.setAiEnabled(accountId, uuid, enabled))) throw new NotFoundError('Conversation');
    return { status: true, ai_enabled: enabled };
  }

  async assistantOf(conv: Conversation): Promise<AssistantRecord> {
    const assistant = await this.ctx.repos.assistants.getById(conv.assistantId);
    if (!assistant) throw new NotFoundError('Assistant');
    return assistant;
  }

  /**
   * An ended conversation takes new messages only if its assistant allows a restart
   * (`conversation_ended_retrigger`); then it is active again with a fresh inactivity timer.
   */
  async ensureOpen(conv: Conversation, assistant: AssistantRecord, status: number): Promise<void> {
    if (conv.status !== 'ended') return;
    if (!assistant.config.conversation_ended_retrigger) {
      throw new AppError('This conversation has ended. Start a new conversation to continue.', status, 'CONVERSATION_ENDED');
    }
    await this.ctx.repos.conversations.reopen(conv.id, inactivityMs(assistant));
    conv.status = 'active';
  }

  /** `message` null: the customer's message is already stored (WhatsApp stores before replying). */
  async runTurn(conv: Conversation, assistant: AssistantRecord, message: string | null, signal?: AbortSignal): Promise<TurnResult> {
    return this.agent.runTurn({
      assistant,
      history: turnHistory(await this.ctx.repos.messages.list(conv.id), message),
      variables: conv.variables,
      signal,
      channel: 'text',
      extraTools: textBuiltinTools(this.ctx, assistant, conv),
    });
  }

  /** Stores the customer message and the reply, charging in the same transaction. False: not covered. */
  async storeTurn(
    conv: Conversation,
    assistant: AssistantRecord,
    message: string,
    turn: TurnResult,
    charge?: { micros: number; reason: string },
  ): Promise<boolean> {
    const res = await this.ctx.repos.messages.append({
      conversationId: conv.id,
      messages: [
        { role: 'user', content: message },
        { role: 'assistant', content: turn.reply, functionCalls: turn.functionCalls },
      ],
      charge: charge && { accountId: conv.accountId, micros: charge.micros, reason: charge.reason, reference: `conversation:${conv.uuid}` },
      inactivityMs: inactivityMs(assistant),
    });
    return res.charged || !charge;
  }

  /**
   * Ends the conversation (once) and emits `conversation.ended` where the assistant asks for it.
   * The end and its event are one transaction: a crash cannot end a conversation silently.
   */
  async end(conv: Conversation, assistant: AssistantRecord | undefined, reason: 'inactivity' | 'assistant'): Promise<boolean> {
    const url = assistant?.config.conversation_ended_webhook_url;
    const ended = await inTransaction(this.ctx.store, async (tx) => {
      const repos = createRepos(tx, this.ctx.clock, this.ctx.secrets);
      if (!(await repos.conversations.end(conv.id, reason))) return false;
      if (!url) return true;
      const now = (await repos.conversations.getById(conv.id)) ?? conv;
      await this.events.enqueueIn(repos.outbox, conv.accountId, url, 'conversation.ended', {
        conversation_id: now.uuid,
        assistant_id: now.assistantId,
        type: now.type,
        reason,
        ended_at: new Date(now.endedAt ?? this.ctx.clock.now()).toISOString(),
        last_message_at: new Date(now.lastMessageAt).toISOString(),
        ...(now.customerIdentifier ? { customer_identifier: now.customerIdentifier } : {}),
        ...(now.type === 'whatsapp' || now.customerPhone ? { customer: { name: now.customerName, phone: now.customerPhone } } : {}),
        variables: now.variables,
        history: historyView(await repos.messages.list(conv.id)),
      });
      return true;
    });
    if (ended && url) this.events.kick();
    return ended;
  }
}
