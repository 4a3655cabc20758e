import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { httpApp, type HttpApp } from '../../support/http-app.ts';
import { chromiumAvailable, collectPageErrors, launchChromium, screenshot } from '../../support/browser.ts';

/**
 * The console's configuration pages in Chromium against a real engine on loopback, over the
 * public REST API only: an assistant created through the form generated from the API's schema
 * (with the keyboard alone, a 422 shown beside its field and fixed), edited with a tool attached,
 * a voice previewed; SIP trunks and numbers created and deleted; a campaign given leads, started
 * and stopped; a chat created over the API listed and read; the webhook secret rotated.
 *
 * The voice previewed is a Flite voice, synthesized in-process by the engine (no provider key):
 * the real preview endpoint, no stand-in needed. The engine runs on a manual clock, so the test
 * moves it 11 s before each page (`fresh`) to stay under the API's 20-requests-per-10-s burst.
 */

const FLITE_SLT = 151; // en-US Flite voice (src/catalog/builtin.ts)
const WIDE = { width: 1280, height: 900 };
const PHONE = { width: 375, height: 800 };

let t: HttpApp;
/** A fresh rate-limit window before a page's burst of requests. */
const fresh = () => t.clock.advance(11_000);
let browser: Browser;
let context: BrowserContext;
let page: Page;
let key: string;
let errors: string[];
const urls: string[] = [];
const ids: { assistant?: number; tool?: number; english?: number; llm?: number; callerId?: number } = {};

const api = async (method: string, p: string, body?: unknown) => {
  fresh();
  const res = await t.http(key, method, p, body);
  expect(res.status, `${method} ${p}: ${res.text}`).toBeLessThan(300);
  return res.body;
};

/** Both widths, full page: look at them in artifacts/screenshots/. */
async function shoot(name: string): Promise<void> {
  await page.setViewportSize(WIDE);
  await screenshot(page, `console-${name}-1280`);
  await page.setViewportSize(PHONE);
  await screenshot(page, `console-${name}-375`);
  await page.setViewportSize(WIDE);
}


async function goTo(navName: string): Promise<void> {
  fresh();
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: navName }).click();
  await page.getByRole('heading', { level: 1 }).waitFor();
}

/** Tab (forward) until the element with this id has focus: proves it is reachable by keyboard. */
async function tabTo(id: string): Promise<void> {
  for (let i = 0; i < 80; i++) {
    if ((await page.evaluate(() => (globalThis as any).document.activeElement?.id)) === id) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`#${id} not reached with Tab`);
}

/** On a focused <select>, arrow keys until it holds `value` (Chromium on Linux changes it in place). */
async function arrowTo(id: string, value: string): Promise<void> {
  const current = () => page.evaluate((i) => (globalThis as any).document.getElementById(i).value, id);
  const options = await page.evaluate((i) => [...(globalThis as any).document.getElementById(i).options].map((o: any) => o.value as string), id);
  const target = options.indexOf(value);
  expect(target, `${value} among the options of #${id}`).toBeGreaterThanOrEqual(0);
  for (let i = 0; i < 60 && (await current()) !== value; i++) {
    const at = options.indexOf(await current());
    await page.keyboard.press(at < target ? 'ArrowDown' : 'ArrowUp');
  }
  expect(await current()).toBe(value);
}

beforeAll(async () => {
  t = await httpApp();
  ({ key } = await t.account(10));
  if (!chromiumAvailable) return;
  // The fake-audio launch also lifts the autoplay gate, so the preview's play() does not hinge
  // on how long the first synthesis keeps the click's user activation waiting.
  browser = await launchChromium({ fakeAudio: path.resolve(import.meta.dirname, '../../../fixtures/audio/silence.wav') });
  context = await browser.newContext({ viewport: WIDE });
  page = await context.newPage();
  errors = collectPageErrors(page);
  page.on('request', (r) => urls.push(r.url()));
  ids.english = ((await api('GET', '/user/assistants/languages')) as Array<{ id: number; code: string }>).find((l) => l.code === 'en-US')!.id;
  ids.llm = ((await api('GET', '/user/assistants/llm-models')) as Array<{ id: number }>)[0]!.id;
  const tool = await api('POST', '/user/tools', {
      name: 'lookup_order',
      description: 'Looks up an order',
      parameters: { type: 'object', properties: { order: { type: 'string' } } },
      endpoint: 'https://tools.example.com/lookup',
  });
  ids.tool = (tool.data ?? tool).id;
}, 60_000);

afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail' && page) await screenshot(page, `console-config-failed-${ctx.task.name.slice(0, 40).replace(/\W+/g, '-')}`);
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe.skipIf(!chromiumAvailable)('console configuration pages in Chromium', () => {
  it('signs in and lists no assistants yet', async () => {
    await page.goto(`${t.url}/console`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // The console opens on the calls list; the navigation leads to the assistants.
    await page.getByRole('navigation').getByRole('link', { name: 'Assistants' }).click({ timeout: 15_000 });
    await page.getByRole('heading', { name: 'Assistants', level: 1 }).waitFor({ timeout: 15_000 });
    await page.getByText('No assistants yet.').waitFor();
  }, 60_000);

  it('creates an assistant through the generated form with the keyboard only: a 422 beside its field, fixed, saved', async () => {
    fresh();
    await page.getByRole('link', { name: 'New assistant' }).click();
    await page.locator('#f-name').waitFor();
    // Fields, bounds and hints come from the API's schema.
    expect(await page.locator('#f-max_duration').getAttribute('min')).toBe('20');
    expect(await page.locator('#f-max_duration').getAttribute('max')).toBe('1200');
    expect(await page.locator('#f-max_duration').inputValue()).toBe('600');
    expect(await page.locator('#f-max_duration-hint').textContent()).toContain('20 to 1200');
    expect(await page.locator('#f-initial_message').getAttribute('maxlength')).toBe('200');
    // Mode-specific fields: pipeline shows the LLM model, not the realtime model.
    expect(await page.locator('#f-llm_model_id').count()).toBe(1);
    expect(await page.locator('#f-multimodal_model_id').count()).toBe(0);

    await page.locator('#f-name').focus();
    await page.keyboard.type('Front desk');
    await tabTo('f-type');
    await arrowTo('f-type', 'outbound');
    await tabTo('f-mode');
    fresh();
    await arrowTo('f-mode', 'multimodal');
    await expect.poll(() => page.locator('#f-multimodal_model_id').count()).toBe(1);
    expect(await page.locator('#f-llm_model_id').count()).toBe(0);
    fresh();
    await arrowTo('f-mode', 'pipeline');
    await expect.poll(() => page.locator('#f-llm_model_id').count()).toBe(1);
    fresh();
    await tabTo('f-language_id');
    await arrowTo('f-language_id', String(ids.english));
    // The voices follow the language and mode (GET /user/assistants/voices?mode=&language_id=).
    await expect.poll(() => page.locator(`#f-voice_id option[value="${FLITE_SLT}"]`).count(), { timeout: 10_000 }).toBe(1);
    await tabTo('f-voice_id');
    await arrowTo('f-voice_id', String(FLITE_SLT));
    await tabTo('f-timezone');
    await page.keyboard.type('Mars/Olympus_Mons');
    await tabTo('f-initial_message');
    await page.keyboard.type('Hello, front desk.');
    await tabTo('f-system_prompt');
    await page.keyboard.type('You answer the phone for a dental office.');
    await tabTo('f-llm_model_id');
    await arrowTo('f-llm_model_id', String(ids.llm));
    await shoot('assistant-new');

    // Enter in a text input submits the form.
    await tabTo('f-timezone');
    await page.keyboard.press('Enter');
    const timezone = page.locator('#f-timezone');
    await expect.poll(() => timezone.getAttribute('aria-invalid'), { timeout: 10_000 }).toBe('true');
    const described = (await timezone.getAttribute('aria-describedby'))!.split(' ');
    expect(described).toContain('f-timezone-error');
    expect(await page.locator('#f-timezone-error').textContent()).toMatch(/time ?zone/i);
    expect(await page.getByRole('alert').first().textContent()).toMatch(/not saved/);
    // Focus went to the field the API named.
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.id)).toBe('f-timezone');
    await shoot('assistant-422');

    await page.keyboard.press('Control+A');
    await page.keyboard.type('Europe/Paris');
    fresh();
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/assistants\/\d+$/, { timeout: 10_000 });
    await page.getByRole('status').filter({ hasText: 'Assistant created.' }).waitFor();
    ids.assistant = Number(page.url().split('/').pop());
    const saved = await api('GET', `/user/assistant/${ids.assistant}`);
    expect(saved).toMatchObject({ name: 'Front desk', type: 'outbound', mode: 'pipeline', language_id: ids.english, voice_id: FLITE_SLT, llm_model_id: ids.llm, timezone: 'Europe/Paris', initial_message: 'Hello, front desk.', max_duration: 600 });
    // The "Call" link the browser-call page answers.
    expect(await page.getByRole('link', { name: 'Call', exact: true }).getAttribute('href')).toBe(`/console/assistants/${ids.assistant}/talk`);
  }, 90_000);

  it('edits the assistant and attaches a tool; warnings from the answer are shown', async () => {
    await page.locator('#f-max_duration').fill('300');
    await page.getByRole('checkbox', { name: 'lookup_order' }).check();
    fresh();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor({ timeout: 10_000 });
    const saved = await api('GET', `/user/assistant/${ids.assistant}`);
    expect(saved.max_duration).toBe(300);
    expect(saved.tool_ids).toEqual([ids.tool]);
    // No OpenAI key in this engine: the LLM the assistant uses is reported as a warning.
    const warnings = page.getByRole('list', { name: 'Warnings' });
    expect(await warnings.count()).toBe(1);
    expect(await warnings.textContent()).toMatch(/\S/);
    await shoot('assistant-edit');
  }, 60_000);

  it('plays a voice preview fetched with the key from a blob: URL', async () => {
    await page.getByRole('button', { name: /Play preview/ }).click();
    const audio = page.getByLabel('Voice preview');
    await expect.poll(() => audio.evaluate((a: any) => a.currentSrc), { timeout: 30_000 }).toMatch(/^blob:/);
    await expect.poll(() => audio.evaluate((a: any) => a.played.length > 0 && a.currentTime > 0), { timeout: 15_000 }).toBe(true);
    expect(urls.some((u) => u.endsWith(`/api/voices/${FLITE_SLT}/preview.wav`))).toBe(true);
  }, 60_000);

  it('lists the assistant, and deletes another after a confirmation', async () => {
    const other = await api('POST', '/user/assistant', {
      name: 'Temp line',
      voice_id: FLITE_SLT,
      language_id: ids.english,
      type: 'inbound',
      mode: 'pipeline',
      llm_model_id: ids.llm,
      timezone: 'Europe/Paris',
      initial_message: '',
      system_prompt: 'Temporary.',
    });
    await goTo('Assistants');
    const rows = page.locator('table tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.filter({ hasText: 'Front desk' }).textContent()).toMatch(/pipeline.*outbound/);
    await shoot('assistants');
    fresh();
    await page.getByRole('link', { name: 'Temp line' }).click();
    await page.getByRole('button', { name: 'Delete assistant' }).click();
    expect(await page.getByText(/cannot be undone/).count()).toBe(1);
    await page.getByRole('button', { name: 'Delete permanently' }).click();
    await page.waitForURL(/\/console\/assistants$/);
    await expect.poll(() => page.locator('table tbody tr').count()).toBe(1);
    expect((await t.http(key, 'GET', `/user/assistant/${other.data.id}`)).status).toBe(404);
  }, 60_000);

  it('creates and deletes SIP trunks and caller-ID numbers; the password is never shown', async () => {
    await goTo('Numbers');
    await page.getByText('No SIP trunks yet.').waitFor();
    await page.getByText('Add a SIP trunk').click();
    const trunk = page.getByRole('form', { name: 'New SIP trunk' });
    await trunk.getByLabel('SIP trunk type').selectOption('number');
    await trunk.getByLabel('Phone number').fill('+14155550100');
    await trunk.getByLabel('Nickname').fill('Main line');
    await trunk.getByLabel('SIP username').fill('alice');
    await trunk.getByLabel('SIP password').fill('s3cret-pass-xyz');
    expect(await trunk.getByLabel('SIP password').getAttribute('type')).toBe('password');
    await trunk.getByLabel('SIP address').fill('sip.example.com');
    await trunk.getByLabel('SIP calling format').selectOption('+e164');
    await trunk.getByLabel('Inbound authorization type').selectOption('ip');
    await trunk.getByLabel('Allowed inbound IPs').fill('not-an-ip');
    fresh();
    await trunk.getByRole('button', { name: 'Create trunk' }).click();
    // The API's 422 for the IP list, beside it.
    await expect.poll(() => trunk.getByLabel('Allowed inbound IPs').getAttribute('aria-invalid'), { timeout: 10_000 }).toBe('true');
    await trunk.getByLabel('Inbound authorization type').selectOption('auth');
    expect(await trunk.getByLabel('Allowed inbound IPs').count()).toBe(0);
    fresh();
    await trunk.getByRole('button', { name: 'Create trunk' }).click();
    await page.getByRole('status').filter({ hasText: 'Trunk Main line created.' }).waitFor({ timeout: 10_000 });
    await page.getByRole('rowheader', { name: 'Main line' }).waitFor();
    expect(await page.content()).not.toContain('s3cret-pass-xyz');

    await page.getByText('Register a caller-ID number').click();
    const number = page.getByRole('form', { name: 'New caller-ID number' });
    await number.getByLabel('Phone number').fill('+14155550177');
    fresh();
    await number.getByRole('button', { name: 'Register number' }).click();
    await page.getByRole('rowheader', { name: '+14155550177' }).waitFor({ timeout: 10_000 });
    await shoot('numbers');

    fresh();
    await page.getByRole('button', { name: 'Delete number +14155550177' }).click();
    await page.getByRole('button', { name: 'Delete number', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Number deleted.' }).waitFor({ timeout: 10_000 });
    fresh();
    await page.getByRole('button', { name: 'Delete trunk Main line' }).click();
    await page.getByRole('button', { name: 'Delete trunk', exact: true }).click();
    await page.getByText('No SIP trunks yet.').waitFor({ timeout: 10_000 });
    expect(await api('GET', '/user/sip-trunks')).toEqual([]);
    expect(await api('GET', '/user/phone-numbers')).toEqual([]);
  }, 90_000);

  it('creates a campaign, uploads leads, starts and stops it', async () => {
    ids.callerId = (await api('POST', '/user/phone-numbers', { phone_number: '+14155550300' })).data.id;
    await goTo('Campaigns');
    await page.getByText('New campaign').click();
    const form = page.getByRole('form', { name: 'New campaign' });
    await form.getByLabel('Name').fill('Recall');
    await expect.poll(() => form.locator(`#user-campaigns-assistant_id option[value="${ids.assistant}"]`).count()).toBe(1);
    await form.getByLabel('Assistant').selectOption(String(ids.assistant));
    await expect.poll(() => form.locator(`#user-campaigns-phone_number_id option[value="${ids.callerId}"]`).count()).toBe(1);
    await form.getByLabel('Phone number').selectOption(String(ids.callerId));
    fresh();
    await form.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByRole('rowheader', { name: 'Recall' }).waitFor({ timeout: 10_000 });

    await page.getByRole('button', { name: 'Add leads to Recall' }).click();
    await page.getByLabel('Leads (CSV)').fill('phone_number,customer_name\n+14155550123,Ana\n+14155550124,Ben\n');
    fresh();
    await page.getByRole('button', { name: 'Upload leads' }).click();
    await expect.poll(() => page.locator('.lead-progress .counts').textContent(), { timeout: 10_000 }).toContain('2 total');
    const [campaign] = (await api('GET', '/user/campaigns')) as Array<{ id: number; status: string }>;
    const leads = await api('GET', `/user/campaigns/${campaign!.id}/leads`);
    expect(JSON.stringify(leads)).toContain('Ana');

    fresh();
    await page.getByRole('button', { name: 'Start Recall' }).click();
    await page.getByRole('button', { name: 'Stop Recall' }).waitFor({ timeout: 10_000 });
    expect((await api('GET', `/user/campaigns/${campaign!.id}`)).status).toBe('in-progress');
    await shoot('campaigns');
    fresh();
    await page.getByRole('button', { name: 'Stop Recall' }).click();
    await page.getByRole('button', { name: 'Start Recall' }).waitFor({ timeout: 10_000 });
    expect((await api('GET', `/user/campaigns/${campaign!.id}`)).status).toBe('stopped');
  }, 90_000);

  it('lists a chat created over the API and shows its history', async () => {
    const assistant = await api('GET', `/user/assistant/${ids.assistant}`);
    const chat = await api('POST', '/conversations', { assistant_id: assistant.uuid, type: 'test', variables: { customer_name: 'Ana' } });
    await goTo('Conversations');
    const rows = page.locator('table tbody tr');
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(1);
    expect(await rows.first().textContent()).toContain('Front desk');
    await shoot('conversations');
    fresh();
    await rows.first().getByRole('link').click();
    await page.waitForURL(new RegExp(`/console/conversations/${chat.conversation_id}$`));
    await page.getByRole('list', { name: 'History' }).getByText('Hello, front desk.').waitFor({ timeout: 10_000 });
    await shoot('conversation');
  }, 60_000);

  it('shows the webhook secret on demand and rotates it after a confirmation, with the overlap', async () => {
    const before = (await api('GET', '/user/webhook-secret')).webhook_secret as string;
    await goTo('Settings');
    const code = page.locator('.secret code');
    await code.waitFor();
    expect(await code.textContent()).not.toBe(before);
    await page.getByRole('button', { name: 'Show' }).click();
    expect(await code.textContent()).toBe(before);
    await page.getByRole('button', { name: 'Hide' }).click();
    expect(await page.getByRole('link', { name: /API reference/ }).getAttribute('href')).toBe('/api/docs');
    await page.getByLabel('Overlap (hours)').fill('2');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByText(/Rotate the webhook secret\?/).waitFor();
    fresh();
    await page.getByRole('button', { name: 'Rotate now' }).click();
    await page.getByText(/previous secret keeps signing/).waitFor({ timeout: 10_000 });
    const after = await api('GET', '/user/webhook-secret');
    expect(after.webhook_secret).not.toBe(before);
    expect(after.previous_secret_valid_until).not.toBeNull();
    await shoot('settings');
  }, 60_000);

  it('never put the key in a URL and logged no page errors', () => {
    expect(urls.some((u) => u.includes(key))).toBe(false);
    expect(errors.filter((e) => !/422|status of 4\d\d/.test(e))).toEqual([]);
  });
});
