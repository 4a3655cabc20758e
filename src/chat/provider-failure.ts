/**
 * What chats tell a client when the model cannot answer: the vendor and the cause, in the
 * endpoint's own error shape ("Failed to process message: OpenAI: 401 invalid API key").
 * A model whose vendor has no key is refused before any request is made.
 */
import type { AppContext } from '../context.ts';
import type { AssistantRecord } from '../store/repos/assistants.ts';
import { describeOpenAiError, isOpenAiError } from '../providers/describe-error.ts';
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

/** One line naming the vendor and the cause of a failed text turn; never a key. */
export function describeChatFailure(ctx: AppContext, err: unknown): string {
  if (err instanceof ProviderNotConfiguredError) return err.message;
  const fromProvider = err instanceof ProviderError && err.provider !== 'agent';
  if (!fromProvider && !isOpenAiError(err)) return err instanceof Error ? err.message : String(err);
  return describeOpenAiError(err, {
    label: VENDORS.openai.label,
    url: ctx.config.openai.baseUrl ?? OPENAI_DEFAULT_BASE_URL,
    secrets: [ctx.config.openai.apiKey, ctx.config.deepgram.apiKey],
  });
}
