import type { AppContext } from '../context.ts';
import type { TurnResult } from '../agent/types.ts';
import { AppError, NotFoundError } from '../util/errors.ts';
import { inactivityMs, type ConversationService } from './conversation-service.ts';
import { GENERATE_REPLY_PRICE_MICROS } from '../billing/prices.ts';
import { assertChatModelConfigured, describeChatFailure, ProviderNotConfiguredError } from './provider-failure.ts';

export interface GenerateReplyInput {
  assistant_id: number;
  customer_identifier: string;
  message: string;
  variables?: Record<string, unknown> | null;
}

const BALANCE_MESSAGE = 'Insufficient balance. Please top up your account to generate replies.';

/**
 * POST /user/ai/generate-reply: one conversation per (assistant, customer identifier), so a CRM
 * gets context across calls without keeping conversation ids. While a human has taken over
 * (`ai_enabled` false) the message is stored, the model is not asked, nothing is charged, and
 * `reply` is the empty string.
 */
export async function generateReply(ctx: AppContext, conversations: ConversationService, accountId: number, input: GenerateReplyInput) {
  const assistant = await ctx.repos.assistants.get(accountId, input.assistant_id);
  if (!assistant) throw new NotFoundError('Assistant', 'ASSISTANT_NOT_FOUND');
  const { conversation: conv } = await ctx.repos.conversations.findOrCreateForCustomer({
    accountId,
    assistantId: assistant.id,
    type: 'api',
    customerIdentifier: input.customer_identifier,
    externalIdentifier: input.customer_identifier,
    variables: input.variables ?? null,
    inactivityMs: inactivityMs(assistant),
  });
  if (input.variables && Object.keys(input.variables).length > 0) {
    conv.variables = { ...(conv.variables ?? {}), ...input.variables };
    await ctx.repos.conversations.setVariables(conv.id, conv.variables);
  }
  await conversations.ensureOpen(conv, assistant, 409);
  const base = { conversation_id: conv.uuid, customer_identifier: input.customer_identifier };
  if (!conv.aiEnabled) {
    await ctx.repos.messages.append({ conversationId: conv.id, messages: [{ role: 'user', content: input.message }], inactivityMs: inactivityMs(assistant) });
    return { success: true, ...base, reply: '', function_calls: [], ai_disabled: true };
  }
  if (!await ctx.repos.ledger.covers(accountId, GENERATE_REPLY_PRICE_MICROS)) throw new AppError(BALANCE_MESSAGE, 402, 'INSUFFICIENT_BALANCE');
  let turn: TurnResult;
  try {
    assertChatModelConfigured(ctx, assistant);
    turn = await conversations.runTurn(conv, assistant, input.message);
  } catch (err) {
    const message = `Failed to generate reply: ${describeChatFailure(ctx, err)}`;
    if (err instanceof ProviderNotConfiguredError) throw new AppError(message, err.status, err.code);
    throw new AppError(message, 502, 'PROVIDER_FAILED', true);
  }
  const charged = await conversations.storeTurn(conv, assistant, input.message, turn, { micros: GENERATE_REPLY_PRICE_MICROS, reason: 'generate-reply' });
  if (!charged) throw new AppError(BALANCE_MESSAGE, 402, 'INSUFFICIENT_BALANCE');
  if (turn.ended) await conversations.end(conv, assistant, 'assistant');
  return { success: true, ...base, reply: turn.reply, function_calls: turn.functionCalls, ai_disabled: false };
}
