import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * Debian's Chromium driven by playwright-core, for tests of the web console. The network is
 * closed, so everything that would call out at start is switched off. `fakeAudio` feeds a WAV
 * file to getUserMedia as the microphone (browser calls). Missing binary: `available` is false
 * and the suites skip with the reason printed.
 */

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumAvailable = fs.existsSync(CHROMIUM);
if (!chromiumAvailable) console.warn(`[browser tests skipped] no Chromium at ${CHROMIUM} (apt-get install chromium)`);

/** Screenshots land here (kept after the run, ignored by git): look at them. */
export const ARTIFACTS_DIR = path.resolve(import.meta.dirname, '../../artifacts/screenshots');

export interface LaunchOptions {
  /** A WAV file played as the microphone; grants microphone permission without a prompt. */
  fakeAudio?: string;
  /**
   * WebRTC over loopback (browser calls): host candidates on 127.0.0.1 as plain addresses
   * (Chromium leaves loopback out and hides addresses behind mDNS names by default).
   */
  webrtcLoopback?: boolean;
}

export async function launchChromium(opts: LaunchOptions = {}): Promise<Browser> {
  const args = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-quic',
  ];
  if (opts.fakeAudio) {
    args.push('--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${opts.fakeAudio}`, '--autoplay-policy=no-user-gesture-required');
  }
  if (opts.webrtcLoopback) args.push('--allow-loopback-in-peer-connection', '--disable-features=WebRtcHideLocalIpsWithMdns');
  return chromium.launch({ executablePath: CHROMIUM, args, timeout: 30_000 });
}

/** A full-page screenshot under artifacts/screenshots/<name>.png; returns the path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const file = path.join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** Errors the page logged or threw (CSP refusals show up here too). */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  return errors;
}

export const tmpProfile = () => fs.mkdtempSync(path.join(os.tmpdir(), 'sb-chromium-'));
