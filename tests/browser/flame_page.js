// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// Drives the page `isoprof flame -o X.html` writes in Debian's Chromium:
// waits for the flamegraph, zooms into the hot JS function, checks the
// tooltip, the table sort, the filter and search boxes, and saves
// screenshots.  One result line per check ("ok NAME" / "FAIL NAME: why");
// exits 1 when any check failed.
//
//   node tests/browser/flame_page.js PAGE.html HOT_FUNCTION OUT_DIR [PROFILE]
// With PROFILE (the file the page was made from), "Download pprof" must give
// back exactly its bytes.
// NODE_PATH must reach playwright-core (scripts/install-playwright.sh prints it);
// CHROMIUM overrides /usr/bin/chromium; TOP_CUM_MIN (default 99) is the least
// cum% the table's first row sorted by cum must have (a capture of several
// threads has no one frame under all of them).
'use strict';

const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const [page_file, hot, outDir, profileFile] = process.argv.slice(2);
const topCumMin = parseFloat(process.env.TOP_CUM_MIN || '99');
if (!page_file || !hot || !outDir) {
	console.error('usage: flame_page.js PAGE.html HOT_FUNCTION OUT_DIR');
	process.exit(2);
}

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
	const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
	const errors = [];
	page.on('pageerror', (e) => errors.push(e.message));
	page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
	await page.goto('file://' + path.resolve(page_file));
	await page.waitForFunction(() => window.isoprof && window.isoprof.loaded, null, { timeout: 15000 });
	check('page loaded the embedded profile', await page.evaluate(() => document.body.dataset.state) === 'ready');
	check('capture panel hidden offline', await page.locator('#capture').isHidden());
	check('download enabled', await page.locator('#download').isEnabled());
	const info = await page.locator('#profile-info').innerText();
	check('header shows samples and period', /Samples/.test(info) && /Period/.test(info), info);
	check('comments carry the capture window',
		/window:/.test(await page.locator('#comments').textContent()));

	await page.locator('#flame').scrollIntoViewIfNeeded();
	let frames = await page.evaluate(() => window.isoprof.frames());
	check('flamegraph drew frames', frames.length > 5, frames.length + ' frames');
	const root = frames.find((f) => f.depth === 0);
	const hotFrames = frames.filter((f) => f.name === hot).sort((a, b) => b.w - a.w);
	check('hot function ' + hot + ' drawn', hotFrames.length > 0);
	if (!hotFrames.length) {
		await browser.close();
		process.exit(1);
	}
	const target = hotFrames[0];
	check('hot function is a JS frame', target.kind === 'js', target.kind);
	check('hot frame narrower than the root before zoom', target.w < root.w - 1,
		target.w + ' vs ' + root.w);

	// Hover: the tooltip names the function and gives flat, cum and share.
	const cx = target.x + Math.min(target.w / 2, 40), cy = target.y + target.h / 2;
	// from outside the chart, in steps: a loaded CI host once missed a single jump
	await page.mouse.move(0, 0);
	await page.mouse.move(cx, cy, { steps: 5 });
	await page.locator('#tooltip').waitFor({ state: 'visible', timeout: 10000 });
	const tip = await page.locator('#tooltip').innerText();
	check('tooltip names the function', tip.split('\n')[0] === hot, JSON.stringify(tip));
	check('tooltip shows file, flat, cum and share',
		/\.[cm]?[jt]s:\d+/.test(tip) && /flat: /.test(tip) && /cum: /.test(tip) && /share of total: [\d.]+%/.test(tip),
		JSON.stringify(tip));

	// Click: the frame becomes the full width; its ancestors stay on top.
	await page.mouse.click(cx, cy);
	frames = await page.evaluate(() => window.isoprof.frames());
	const zoomed = frames.find((f) => f.name === hot && f.depth === target.depth && !f.ancestor);
	check('zoom: clicked frame is the zoom target', await page.evaluate(() => window.isoprof.zoomed()) === hot);
	check('zoom: clicked frame is full width', zoomed && Math.abs(zoomed.w - root.w) < 1,
		zoomed ? zoomed.w + ' vs ' + root.w : 'frame gone');
	check('zoom: ancestors still shown', frames.filter((f) => f.ancestor).length === target.depth);
	check('zoom: canvas data-zoom', await page.locator('#flame').getAttribute('data-zoom') === hot);
	const tip2 = await page.locator('#tooltip').innerText();
	check('tooltip after zoom names what is under the pointer', tip2.split('\n')[0] === hot,
		JSON.stringify(tip2));
	await page.screenshot({ path: path.join(outDir, 'flame-zoomed.png'), fullPage: false });

	await page.click('#reset');
	frames = await page.evaluate(() => window.isoprof.frames());
	check('reset: no zoom', await page.evaluate(() => window.isoprof.zoomed()) === null &&
		!frames.some((f) => f.ancestor));

	// Keyboard: the canvas takes focus, Enter zooms, Escape resets.
	await page.locator('#flame').focus();
	await page.keyboard.press('ArrowDown');
	await page.keyboard.press('Enter');
	const kz = await page.evaluate(() => window.isoprof.zoomed());
	await page.keyboard.press('Escape');
	check('keyboard zoom and reset', kz !== null && await page.evaluate(() => window.isoprof.zoomed()) === null,
		'zoomed ' + kz);

	// Table: flat is the default order, cum on click, descending.
	const col = async (i) => page.$$eval('#functions tbody tr', (rows, i) =>
		rows.map((r) => r.children[i].textContent), i);
	const pctOf = (s) => parseFloat(s);
	let flatPct = (await col(1)).map(pctOf);
	check('table sorted by flat by default', flatPct.length > 3 &&
		flatPct.every((v, i) => i === 0 || v <= flatPct[i - 1]), flatPct.slice(0, 8).join(' '));
	await page.click('#sort-cum');
	const cumPct = (await col(3)).map(pctOf);
	check('table sorted by cum', cumPct.every((v, i) => i === 0 || v <= cumPct[i - 1]) &&
		cumPct[0] >= topCumMin,
		cumPct.slice(0, 8).join(' '));
	check('aria-sort follows the sort', await page.locator('#sort-cum').evaluate((b) =>
		b.parentElement.getAttribute('aria-sort')) === 'descending');
	await page.click('#sort-name');
	const names = await col(4);
	check('table sorted by name', names.every((v, i) => i === 0 || v >= names[i - 1]));

	// Filter: only matching functions stay.
	await page.fill('#table-filter', hot);
	await page.waitForFunction((h) => Array.from(document.querySelectorAll('#functions tbody tr'))
		.every((r) => r.dataset.name.includes(h)), hot, { timeout: 3000 }).catch(() => {});
	const filtered = await col(4);
	check('filter keeps matching rows', filtered.length >= 1 && filtered.every((n) => n.includes(hot)),
		JSON.stringify(filtered.slice(0, 5)));
	const tableCum = parseFloat((await col(3))[filtered.indexOf(hot)]);

	// Search: the hot function's share is shown and matches the table's cum%.
	await page.fill('#search', '^' + hot + '$');
	await page.waitForFunction(() => /matches: /.test(document.getElementById('search-result').textContent),
		null, { timeout: 3000 }).catch(() => {});
	const sr = await page.locator('#search-result').textContent();
	const share = parseFloat((sr.match(/([\d.]+)%/) || [])[1]);
	check('search shows the matched share', Math.abs(share - tableCum) < 0.2, sr + ' vs table ' + tableCum);

	// A table row focuses its function in the flamegraph.
	await page.fill('#search', '');
	await page.locator('#functions tbody tr', { hasText: hot }).first().click();
	check('row click zooms the flamegraph', await page.evaluate(() => window.isoprof.zoomed()) === hot);
	await page.click('#reset');

	// Sample type selector: every type offered, switching redraws.
	const types = await page.$$eval('#sample-type option', (o) => o.map((x) => x.textContent));
	check('sample types listed', types.length >= 2, JSON.stringify(types));
	if (types.length >= 2) {
		await page.selectOption('#sample-type', '0');
		frames = await page.evaluate(() => window.isoprof.frames());
		check('other sample type draws', frames.some((f) => f.name === hot));
		await page.selectOption('#sample-type', String(types.length - 1));
	}
	// Label filter: restricting to one class keeps a subset of the samples.
	const classOpt = await page.$$eval('#label-filter option', (o) =>
		(o.find((x) => x.value.startsWith('class\0js')) || {}).value || null);
	check('label filter offers class=js', !!classOpt);
	if (classOpt) {
		await page.selectOption('#label-filter', classOpt);
		const samples = await page.locator('#profile-info').innerText();
		check('label filter restricts the samples', /Samples\s+[\d,]+ of [\d,]+/.test(samples), samples);
		await page.selectOption('#label-filter', '');
	}
	if (profileFile) {
		const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
		const got = fs.readFileSync(await dl.path());
		check('download gives back the profile\'s exact bytes', got.equals(fs.readFileSync(profileFile)),
			got.length + ' bytes, ' + dl.suggestedFilename());
	}
	await page.screenshot({ path: path.join(outDir, 'flame-page.png'), fullPage: true });
	check('no page errors', errors.length === 0, errors.join('; '));
	await browser.close();
	process.exit(failed ? 1 : 0);
})().catch((e) => {
	console.log('FAIL browser: ' + (e && e.stack || e));
	process.exit(1);
});
