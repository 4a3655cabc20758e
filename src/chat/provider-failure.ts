/**
 * What chats tell a client when the model cannot answer: the vendor and the cause, in the
 * endpoint's own error shape ("Failed to process message: OpenAI: 401 invalid API key"), to
 * authenticated callers; an anonymous chat-widget user gets a generic line and the cause goes
 * to the server's log.
 * A model whose vendor has no key is refused before any request is made.
 */
import type { AppContext } from '../context.ts';
import type { AssistantRecord } from '../store/repos/assistants.ts';
import { describeOpenAiError, isOpenAiError, scrub } from '../providers/describe-error.ts';
import { isVendor, missingMessage, VENDORS } from '../providers/status.ts';
import { AppError, ProviderError } from '../util/errors.ts';
import { DEFAULT_CHAT_MODEL_ID } from './agent-deps.ts';

const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** The model's vendor is not configured: a server-side setting, not a passing failure. */
export class ProviderNotConfiguredError extends AppError {
  constructor(message: string) {
    super(message, 503, 'PROVIDER_NOT_CONFIGURED');
  }
}

/** The catalog model a text turn of this assistant runs on first (as the agent resolves it). */
function chatModelVendor(ctx: AppContext, assistant: AssistantRecord): string | undefined {
  const c = assistant.config;
  const id = c.llm_model_id ?? c.chat_llm_fallback_id ?? DEFAULT_CHAT_MODEL_ID;
  return (ctx.catalog.llmModel(id) ?? ctx.catalog.llmModel(DEFAULT_CHAT_MODEL_ID) ?? ctx.catalog.llmModels()[0])?.provider;
}

/** Throws ProviderNotConfiguredError when the assistant's chat model has no key configured. */
export function assertChatModelConfigured(ctx: AppContext, assistant: AssistantRecord): void {
  const vendor = chatModelVendor(ctx, assistant);
  const missing = vendor && isVendor(vendor) ? missingMessage(ctx.config, vendor) : undefined;
  if (missing) throw new ProviderNotConfiguredError(missing);
}

/** What an anonymous (chat widget) user is told when the assistant cannot answer. */
export const GENERIC_CHAT_FAILURE = 'the assistant could not answer right now';

/** Told in place of the message of an error that is not a provider's (it may name internals). */
const INTERNAL_FAILURE = 'internal error';

const secretsOf = (ctx: AppContext) => [ctx.config.openai.apiKey, ctx.config.deepgram.apiKey];

/** One line naming the vendor and the cause of a failed text turn, for an authenticated caller; never a key. */
export function describeChatFailure(ctx: AppContext, err: unknown): string {
  if (err instanceof ProviderNotConfiguredError) return err.message;
  const fromProvider = err instanceof ProviderError && err.provider !== 'agent';
  if (!fromProvider && !isOpenAiError(err)) return INTERNAL_FAILURE;
  return describeOpenAiError(err, {
    label: VENDORS.openai.label,
    url: ctx.config.openai.baseUrl ?? OPENAI_DEFAULT_BASE_URL,
    secrets: secretsOf(ctx),
  });
}

/** The cause for the server's own log: as describeChatFailure, with a non-provider error's message (scrubbed). */
export function chatFailureDetail(ctx: AppContext, err: unknown): string {
  const told = describeChatFailure(ctx, err);
  if (told !== INTERNAL_FAILURE) return told;
  return `${INTERNAL_FAILURE}: ${scrub(err instanceof Error ? err.message : String(err), secretsOf(ctx))}`;
}
