// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// Drives the page `isoprof serve` sends at GET / in Debian's Chromium: the
// target list from v1/targets, a 2 s capture of SCRIPT @ latest through the
// profile API, the flamegraph of the response, a click on HOT's frame
// (zoom), the table sorted by cum, a 429 shown with its Retry-After, and
// "Download pprof".  One result line per check ("ok NAME" / "FAIL NAME:
// why"); exits 1 when any check failed.
//
//   node tests/browser/serve_page.js BASE_URL SCRIPT HOT SHOT_DIR OUT_DIR
// The download is saved as OUT_DIR/download.pb.gz (serve.sh reads it with
// go tool pprof); the screenshot as SHOT_DIR/serve-page.png.
// NODE_PATH must reach playwright-core (scripts/install-playwright.sh prints it);
// CHROMIUM overrides /usr/bin/chromium.
'use strict';

const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const [base, script, hot, shotDir, outDir] = process.argv.slice(2);
if (!base || !script || !hot || !shotDir || !outDir) {
	console.error('usage: serve_page.js BASE_URL SCRIPT HOT SHOT_DIR OUT_DIR');
	process.exit(2);
}
fs.mkdirSync(shotDir, { recursive: true });
fs.mkdirSync(outDir, { recursive: true });

let failed = 0;
function check(name, ok, why) {
	if (ok) {
		console.log('ok   ' + name);
	} else {
		failed++;
		console.log('FAIL ' + name + ': ' + (why || 'check failed'));
	}
}

(async () => {
	const browser = await chromium.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		args: ['--no-sandbox', '--disable-gpu'],
	});
	const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, acceptDownloads: true });
	const page = await context.newPage();
	const errors = [];
	page.on('pageerror', (e) => errors.push(e.message));
	page.on('console', (m) => {
		// the 429 below is expected: Chromium logs failed fetches as console errors
		if (m.type() === 'error' && !/status of 429/.test(m.text()))
			errors.push(m.text());
	});
	await page.goto(base);
	check('capture panel shown when served', await page.locator('#capture').isVisible());

	// Targets: one "SCRIPT @ latest" entry from v1/targets.
	const want = JSON.stringify({ script, version: 'latest' });
	await page.waitForFunction((w) => Array.from(document.querySelectorAll('#target option'))
		.some((o) => o.value === w), want, { timeout: 15000 }).catch(() => {});
	const options = await page.$$eval('#target option', (o) => o.map((x) => x.textContent));
	const has = await page.$$eval('#target option', (o, w) => o.some((x) => x.value === w), want);
	check('target list offers ' + script + ' @ latest', has, JSON.stringify(options.slice(0, 6)));
	if (!has) {
		await page.screenshot({ path: path.join(shotDir, 'serve-page.png'), fullPage: true });
		await browser.close();
		process.exit(1);
	}
	await page.selectOption('#target', want);
	await page.fill('#duration', '2');
	await page.selectOption('#profile-type', 'cpu');
	check('start enabled', await page.locator('#start').isEnabled());

	// Capture: progress while it runs, then the profile is rendered.
	const t0 = Date.now();
	await page.click('#start');
	await page.waitForFunction(() => document.body.dataset.capture === 'running', null, { timeout: 3000 })
		.catch(() => {});
	check('capture running', await page.evaluate(() => document.body.dataset.capture) === 'running');
	await page.waitForTimeout(1000);
	const mid = await page.evaluate(() => document.getElementById('progress').value);
	check('progress bar moves during the capture', mid > 200 && mid < 1000, 'progress ' + mid);

	// A second capture of the same target meanwhile: the daemon says 429 with Retry-After.
	const busy = await page.evaluate(async (s) => {
		const r = await fetch('accounts/local/workers/workers/' + encodeURIComponent(s) +
			'/versions/latest/profile', { method: 'POST', headers: { 'Content-Type': 'application/json' },
			body: JSON.stringify({ duration_ms: 1000 }) });
		return { status: r.status, retry: r.headers.get('Retry-After'), body: await r.json() };
	}, script);
	check('same target while capturing: 429 with Retry-After', busy.status === 429 && Number(busy.retry) >= 1 &&
		busy.body.success === false && busy.body.errors[0].code === 10050, JSON.stringify(busy));

	await page.waitForFunction(() => document.body.dataset.capture !== 'running', null, { timeout: 60000 });
	const cap = await page.evaluate(() => document.body.dataset.capture);
	const status = await page.locator('#capture-status').textContent();
	check('capture done', cap === 'done', cap + ': ' + status);
	check('capture took about the requested 2 s', Date.now() - t0 >= 2000, (Date.now() - t0) + ' ms');
	check('status reports the profile', /Profile received: [\d,]+ bytes, \d+ samples/.test(status), status);
	await page.waitForFunction(() => window.isoprof && window.isoprof.loaded, null, { timeout: 15000 });
	check('page state ready', await page.evaluate(() => document.body.dataset.state) === 'ready');

	// Flamegraph: the hot function's frame, click to zoom.
	await page.locator('#flame').scrollIntoViewIfNeeded();
	let frames = await page.evaluate(() => window.isoprof.frames());
	check('flamegraph drawn', frames.length > 5, frames.length + ' frames');
	const root = frames.find((f) => f.depth === 0);
	const hotFrames = frames.filter((f) => f.name === hot).sort((a, b) => b.w - a.w);
	check(hot + ' in the flamegraph', hotFrames.length > 0);
	if (hotFrames.length && root) {
		const f = hotFrames[0];
		check(hot + ' is a JS frame', f.kind === 'js', f.kind);
		await page.mouse.click(f.x + Math.min(f.w / 2, 40), f.y + f.h / 2);
		frames = await page.evaluate(() => window.isoprof.frames());
		const z = frames.find((x) => x.name === hot && x.depth === f.depth && !x.ancestor);
		check('click zooms to ' + hot, await page.evaluate(() => window.isoprof.zoomed()) === hot &&
			await page.locator('#flame').getAttribute('data-zoom') === hot);
		check('zoomed frame fills the width', z && Math.abs(z.w - root.w) < 1, z ? z.w + ' vs ' + root.w : 'gone');
		await page.screenshot({ path: path.join(shotDir, 'serve-zoomed.png') });
		await page.click('#reset');
	}

	// Table sorted by cum, descending; the hot function is listed.
	await page.click('#sort-cum');
	const cum = await page.$$eval('#functions tbody tr', (rows) => rows.map((r) => parseFloat(r.children[3].textContent)));
	check('table sorted by cum', cum.length > 3 && cum.every((v, i) => i === 0 || v <= cum[i - 1]),
		cum.slice(0, 8).join(' '));
	const names = await page.$$eval('#functions tbody tr', (rows) => rows.map((r) => r.dataset.name));
	check('table lists ' + hot, names.includes(hot));

	// Download: the bytes the daemon sent.
	const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
	const file = path.join(outDir, 'download.pb.gz');
	await dl.saveAs(file);
	const bytes = fs.readFileSync(file);
	check('download is a gzip pprof', bytes.length > 100 && bytes[0] === 0x1f && bytes[1] === 0x8b,
		bytes.length + ' bytes, ' + dl.suggestedFilename());

	await page.screenshot({ path: path.join(shotDir, 'serve-page.png'), fullPage: true });
	check('no page errors', errors.length === 0, errors.join('; '));
	await browser.close();
	process.exit(failed ? 1 : 0);
})().catch((e) => {
	console.log('FAIL browser: ' + (e && e.stack || e));
	process.exit(1);
});
