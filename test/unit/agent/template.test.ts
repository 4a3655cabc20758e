import { describe, expect, it } from 'vitest';
import { fillTemplate, mergeVariables } from '../../../src/agent/template.ts';
import { buildSystemPrompt, initialMessage } from '../../../src/agent/prompt.ts';

describe('variables and prompt', () => {
  it('fills {{variables}}, later layers win, unknown ones stay visible', () => {
    const vars = mergeVariables({ company: 'Acme', tone: 'calm' }, { company: 'Globex', n: 3 }, null);
    expect(fillTemplate('{{ company }} / {{tone}} / {{n}} / {{missing}}', vars)).toBe('Globex / calm / 3 / {{missing}}');
    expect(initialMessage({ initial_message: 'Hi {{name}}' }, { name: null })).toBe('Hi');
  });

  it('adds the language, knowledge passages and the search hint', () => {
    const p = buildSystemPrompt({
      config: { system_prompt: 'Be {{tone}}.', language_id: 1, secondary_language_ids: [2] },
      variables: { tone: 'brief' },
      channel: 'voice',
      languageName: (id) => (id === 1 ? 'English (en-US)' : 'German (de-DE)'),
      passages: [{ title: 'Hours', content: 'Open 9-5.' }],
      searchOffered: true,
    });
    expect(p).toContain('Be brief.');
    expect(p).toContain('Respond in English (en-US). If the customer uses German (de-DE), answer in that language instead.');
    expect(p).toContain('[1] Hours\nOpen 9-5.');
    expect(p).toContain('search_knowledge_base');
    expect(p).not.toContain('text chat');
  });
});
