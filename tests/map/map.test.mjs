// The live map of `ccpn-run serve`, in Debian's headless Chromium: load the page,
// post the harbour sample, see detections in the list and as markers on the map,
// open one, and keep a screenshot (artifacts/map.png).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const bin = process.env.CCPN_RUN || path.join(repo, 'target', 'debug', 'ccpn-run');
const WAIT = 60_000;

// Starts the server on a free loopback port; resolves with its base URL.
function startServer(args) {
  const child = spawn(bin, ['serve', path.join(repo, 'nets', 'harbour.ron'), '--listen', '127.0.0.1:0', ...args],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const url = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the server did not start: ' + stderr)), WAIT);
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = /on (http:\/\/127\.0\.0\.1:\d+)\//.exec(stderr);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on('exit', (code) => reject(new Error('the server exited with ' + code + ': ' + stderr)));
  });
  return { child, url };
}

test('the live map shows zones, tracks and detections', { timeout: 180_000 }, async () => {
  const token = 'map-test-token';
  const server = startServer(['--token', token]);
  const base = await server.url;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const outside = [];
    page.on('request', (r) => { if (!r.url().startsWith(base)) outside.push(r.url()); });
    await page.goto(base + '/?access_token=' + token);
    // The zones are drawn (seven of them in the harbour net).
    await page.waitForFunction(() => document.querySelectorAll('.leaflet-overlay-pane path').length >= 7, null, { timeout: WAIT });
    await page.waitForSelector('#status.live', { timeout: WAIT });

    const events = readFileSync(path.join(repo, 'examples', 'harbour.jsonl'));
    const answer = await fetch(base + '/events', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-ndjson', Authorization: 'Bearer ' + token },
      body: events,
    }).then((r) => r.json());
    assert.equal(answer.processed, 6000);

    // Detections appear in the list and as markers on the map.
    await page.waitForFunction(() => document.querySelectorAll('#detections li').length >= 59, null, { timeout: WAIT });
    await page.waitForFunction(() => document.querySelectorAll('path.ccpn-detection').length >= 59, null, { timeout: WAIT });
    const first = await page.textContent('#detections li:last-child');
    assert.match(first, /entry/);
    assert.match(first, /members: 2401, 2551/);
    // Tracked objects with their trails.
    await page.waitForFunction(() => document.querySelectorAll('path.ccpn-object').length >= 5, null, { timeout: WAIT });

    // Clicking a detection shows its members and fields, and its popup on the map.
    await page.click('#detections li:last-child');
    const detail = await page.textContent('#detail');
    assert.match(detail, /"ids"/);
    assert.match(detail, /"seq": 0/);
    await page.waitForSelector('.leaflet-popup-content', { timeout: WAIT });
    assert.match(await page.textContent('.leaflet-popup-content'), /entry/);
    // A scale, and nothing fetched from anywhere else.
    await page.waitForSelector('.leaflet-control-scale', { timeout: WAIT });
    assert.deepEqual(outside, []);

    mkdirSync(path.join(here, 'artifacts'), { recursive: true });
    await page.screenshot({ path: path.join(here, 'artifacts', 'map.png') });
  } finally {
    await browser.close();
    server.child.kill('SIGTERM');
  }
});
