import { fillTemplate } from './template.ts';
import type { AgentAssistantConfig, KbPassage } from './types.ts';

export interface PromptParts {
  config: AgentAssistantConfig;
  variables: Record<string, unknown>;
  channel: 'text' | 'voice';
  languageName?: (id: number) => string | undefined;
  /** Passages found for the latest message (knowledge base in `prompt` mode). */
  passages?: KbPassage[];
  /** Whether a search function is offered (knowledge base in `function_call` mode). */
  searchOffered?: boolean;
}

/** The system message: the assistant's own prompt first, then the engine's few additions. */
export function buildSystemPrompt(p: PromptParts): string {
  const sections = [fillTemplate(p.config.system_prompt ?? '', p.variables).trim()];
  const primary = p.config.language_id !== undefined ? p.languageName?.(p.config.language_id) : undefined;
  if (primary) {
    const others = (p.config.secondary_language_ids ?? []).map((id) => p.languageName?.(id)).filter((n): n is string => !!n);
    sections.push(
      others.length > 0
        ? `Respond in ${primary}. If the customer uses ${others.join(' or ')}, answer in that language instead.`
        : `Respond in ${primary}.`,
    );
  }
  if (p.channel === 'text') {
    sections.push('This is a text chat: answer in plain text, concisely.');
  }
  if (p.passages && p.passages.length > 0) {
    const body = p.passages.map((x, i) => `[${i + 1}] ${x.title}\n${x.content}`).join('\n\n');
    sections.push(`Use the following knowledge base passages when they are relevant:\n\n${body}`);
  }
  if (p.searchOffered) {
    sections.push('When a question needs facts you are not sure about, call search_knowledge_base first.');
  }
  return sections.filter((s) => s.length > 0).join('\n\n');
}

/** The initial message as the customer sees it, with variables filled in. */
export function initialMessage(config: AgentAssistantConfig, variables: Record<string, unknown>): string {
  return fillTemplate(config.initial_message ?? '', variables).trim();
}
