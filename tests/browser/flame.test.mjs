#!/usr/bin/env node
// SPDX-License-Identifier: GPL-2.0
/*
 * Real-browser checks of boundprof flame graphs: headless Chromium driven by
 * playwright-core, loading each file from file:// with no network.
 *
 *   node tests/browser/flame.test.mjs [--shot OUT.png] FILE.html|FILE.svg...
 *
 * For each file: loads without console errors or network requests, draws
 * something (the screenshot of the chart is not blank), shows a tooltip with
 * a value and a percentage, zooms on click (the clicked frame then spans the
 * chart and the picture changes), resets, searches (text and regex: the
 * "matched N% of VIEW" line appears and frames are highlighted), and switches
 * views. Timings go to stdout. --shot saves a screenshot of the first file.
 *
 * Needs `npm ci` in tests/browser and Debian's chromium (BP_CHROMIUM overrides
 * /usr/bin/chromium). Exit status 0 when every check passed.
 */
import { mkdtempSync, rmSync, existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const CHROMIUM = process.env.BP_CHROMIUM || '/usr/bin/chromium';
/* without these, Chromium keeps calling home: refused connections flood a closed network */
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
	'--no-first-run', '--disable-background-networking', '--disable-component-update',
	'--disable-sync'];
const MATCH_FILL = 'rgb(230,0,230)';
const CLASS_RE = new RegExp('(cpu-bound|memory-bandwidth-bound|io-bound|lock-bound|' +
			    'cpu-starved|cpu-throttled|gil-bound|syscall-bound|idle|mixed|' +
			    'blocked-on-peer|unknown)');

let failures = 0;

function ok(cond, what, detail) {
	if (cond) {
		console.log(`ok    ${what}`);
	} else {
		failures++;
		console.log(`FAIL  ${what}${detail !== undefined ? ': ' + detail : ''}`);
	}
	return cond;
}

function usage() {
	console.error('usage: node flame.test.mjs [--shot OUT.png] FILE.html|FILE.svg...');
	process.exit(2);
}

let chromium;
try {
	({ chromium } = await import('playwright-core'));
} catch (e) {
	console.error('flame.test: playwright-core is not installed: run `npm ci` in ' +
		      'tests/browser (or the test dependency install)\n' + e.message);
	process.exit(2);
}
if (!existsSync(CHROMIUM)) {
	console.error(`flame.test: no Chromium at ${CHROMIUM}: apt-get install chromium ` +
		      '(or the test dependency install)');
	process.exit(2);
}

const args = process.argv.slice(2);
let shot = null;
const files = [];
for (let i = 0; i < args.length; i++) {
	if (args[i] === '--shot')
		shot = args[++i];
	else if (args[i].startsWith('-'))
		usage();
	else
		files.push(args[i]);
}
if (!files.length)
	usage();

/* pixel statistics of PNG screenshots, decoded by the browser itself in a blank page */
async function pngStats(helper, a, b) {
	return helper.evaluate(async ({ a, b }) => {
		async function pixels(b64) {
			const img = new Image();

			img.src = 'data:image/png;base64,' + b64;
			await img.decode();
			const c = document.createElement('canvas');

			c.width = img.width;
			c.height = img.height;
			const ctx = c.getContext('2d');

			ctx.drawImage(img, 0, 0);
			const d = ctx.getImageData(0, 0, c.width, c.height).data;

			return { w: c.width, h: c.height, d: d };
		}
		const pa = await pixels(a), out = { w: pa.w, h: pa.h };
		const colours = new Set();
		let sum = 0, sum2 = 0;
		const n = pa.w * pa.h;

		for (let i = 0; i < n * 4; i += 4) {
			colours.add((pa.d[i] << 16) | (pa.d[i + 1] << 8) | pa.d[i + 2]);
			const l = 0.299 * pa.d[i] + 0.587 * pa.d[i + 1] + 0.114 * pa.d[i + 2];

			sum += l;
			sum2 += l * l;
		}
		out.colours = colours.size;
		out.stddev = Math.sqrt(Math.max(0, sum2 / n - (sum / n) ** 2));
		if (b) {
			const pb = await pixels(b);
			let diff = 0;

			if (pb.w !== pa.w || pb.h !== pa.h) {
				diff = n;
			} else {
				for (let i = 0; i < n * 4; i += 4)
					if (pa.d[i] !== pb.d[i] || pa.d[i + 1] !== pb.d[i + 1] ||
					    pa.d[i + 2] !== pb.d[i + 2])
						diff++;
			}
			out.diff = diff / n;
		}
		return out;
	}, { a: a.toString('base64'), b: b ? b.toString('base64') : null });
}

function escapeRegex(s) {
	return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

async function chartShot(page) {
	const box = await page.evaluate(() => window.bpFlame.chartBox());

	return page.screenshot({ clip: { x: Math.max(0, box.x), y: Math.max(0, box.y),
					 width: Math.max(1, box.w), height: Math.max(1, box.h) } });
}

async function clickButton(page, isSvg, text, selector) {
	if (isSvg)
		await page.locator('.bp-btn', { hasText: text }).first().click();
	else
		await page.locator(selector).click();
}

async function matchedText(page, isSvg) {
	return page.locator(isSvg ? '.bp-s-matched' : '.bp-matched').first().textContent();
}

async function runSearch(page, isSvg, query, regex) {
	const wantRegex = !!regex;
	if (isSvg) {
		const toggle = page.locator('.bp-btn', { hasText: 'regex' }).first();
		const on = await toggle.textContent();

		if (on.includes('\u2611') !== wantRegex)
			await clickButton(page, true, 'regex');
		page.once('dialog', (d) => d.accept(query));
		await page.locator('.bp-btn', { hasText: 'Search' }).first().click();
	} else {
		const box = page.locator('input.bp-regex');

		if ((await box.isChecked()) !== wantRegex)
			await box.click();
		await page.locator('input.bp-search').fill(query);
		await page.locator('input.bp-search').press('Enter');
	}
	await page.waitForFunction(() => /matched|invalid/.test(window.bpFlame.matched()));
	return matchedText(page, isSvg);
}

/* what the page says about itself once ready */
function pageState() {
	const f = window.bpFlame;

	return {
		load: f.loadMs, render: f.renderMs, drawn: f.drawn, view: f.view(), kind: f.kind,
		verdict: f.verdict(),
		hasVerdict: !!JSON.parse(document.getElementById('bp-data').textContent).verdict
	};
}

function highlighted(fill) {
	return window.bpFlame.frames().filter((x) => x.fill === fill).length;
}

async function testFile(context, helper, file) {
	const abs = path.resolve(file);
	const isSvg = abs.endsWith('.svg');
	const tag = path.basename(abs);
	const errors = [], requests = [];

	if (!ok(existsSync(abs), `${tag}: exists`))
		return;
	const page = await context.newPage();

	page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
	page.on('pageerror', (e) => errors.push(String(e)));
	page.on('request', (r) => {
		if (!/^(file|data|about|blob):/.test(r.url()))
			requests.push(r.url());
	});

	const t0 = Date.now();
	await page.goto(pathToFileURL(abs).href);
	const ready = await page.waitForFunction(() => window.bpFlame && window.bpFlame.ready,
						 null, { timeout: 60000 })
		.then(() => true, () => false);
	const wallMs = Date.now() - t0;
	if (!ok(ready, `${tag}: renderer ready`, errors.join('; ')))
		return;
	const api = await page.evaluate(pageState);
	if (api.hasVerdict) {
		const head = await page.locator(isSvg ? '.bp-s-verdict' : '.bp-verdict').first()
			.textContent();

		ok(api.verdict === 'whole recording' && CLASS_RE.test(head) &&
		   /confidence/.test(head), `${tag}: the verdict is in the header`, head);
	}
	console.log(`#     ${tag}: ${(statSync(abs).size / 1024).toFixed(0)} KiB, ` +
		    `page ready in ${wallMs} ms (script ${api.load.toFixed(0)} ms incl. first ` +
		    `render ${api.render.toFixed(0)} ms, ${api.drawn} frames drawn, ` +
		    `view ${api.view})`);

	if (shot && file === files[0]) {
		/* fullPage hangs on SVG documents: size the viewport to the document instead */
		const h = await page.evaluate(() =>
			Math.ceil(document.documentElement.getBoundingClientRect().height));
		const vp = page.viewportSize();

		await page.setViewportSize({ width: vp.width,
					     height: Math.min(Math.max(h, 200), 4000) });
		await page.screenshot({ path: shot });
		await page.setViewportSize(vp);
		console.log(`#     screenshot saved to ${shot}`);
	}

	/* drawn, and not blank */
	const shot1 = await chartShot(page);
	const st = await pngStats(helper, shot1);
	ok(st.colours >= 6 && st.stddev >= 10, `${tag}: chart is not blank`,
	   `${st.colours} colours, stddev ${st.stddev.toFixed(1)}`);

	/* a frame below the root that is not already full width: the widest such */
	const chart = await page.evaluate(() => window.bpFlame.chartBox());
	let frames = await page.evaluate(() => window.bpFlame.frames());
	const target = frames
		.filter((f) => !f.ancestor && f.depth >= 1 && f.w < 0.9 * chart.w && f.w > 20)
		.sort((a, b) => b.w - a.w)[0];
	if (!ok(!!target, `${tag}: a frame to click`, `${frames.length} frames drawn`))
		return;
	const cx = target.x + target.w / 2, cy = target.y + target.h / 2;

	/* tooltip */
	await page.mouse.move(cx, cy);
	const tip = await page.waitForFunction((sel) => {
		const t = document.querySelector(sel);

		if (!t || t.hidden || t.getAttribute('visibility') === 'hidden')
			return null;
		return t.textContent;
	}, isSvg ? '.bp-s-tip' : '.bp-tip', { timeout: 5000 })
		.then((h) => h.jsonValue(), () => null);
	ok(tip && tip.includes(target.name) && /\d%/.test(tip) &&
	   /(samples?|\d (s|ms|\u00b5s))\b/.test(tip),
	   `${tag}: tooltip names the frame, value with unit, share`, JSON.stringify(tip));
	if (api.kind === 'diff') {
		ok(/before:/.test(tip) && /after:/.test(tip) && /change: /.test(tip),
		   `${tag}: diff tooltip has both shares and the change`, JSON.stringify(tip));
		/* red (hue 0) grew, blue (215) shrank, grey the same: nothing else */
		const fills = [...new Set(frames.map((f) => f.fill))];
		ok(fills.every((f) => /^hsl\((0|215),/.test(f)) &&
		   fills.some((f) => !/^hsl\(0,0%/.test(f)),
		   `${tag}: diff colours frames by the change of their share`, fills.join(' '));
	}

	/* zoom */
	await page.mouse.click(cx, cy);
	await page.waitForFunction((n) => window.bpFlame.zoom().name === n, target.name,
				   { timeout: 5000 }).catch(() => {});
	frames = await page.evaluate(() => window.bpFlame.frames());
	const zoomed = frames.find((f) => !f.ancestor && f.name === target.name &&
					  f.depth === target.depth);
	ok(zoomed && Math.abs(zoomed.w - chart.w) <= 2,
	   `${tag}: clicked "${target.name}" spans the chart`,
	   zoomed ? `${zoomed.w.toFixed(1)} of ${chart.w.toFixed(1)} px` : 'not drawn');
	const zp = await page.evaluate(() => window.bpFlame.zoomProcess());
	if (zp && zp.verdict)
		ok(await page.evaluate(() => window.bpFlame.verdict()) === zp.name,
		   `${tag}: zoomed into ${zp.name}, the header shows its verdict`);
	const shot2 = await chartShot(page);
	const d2 = await pngStats(helper, shot1, shot2);
	ok(d2.diff > 0.01, `${tag}: zoomed picture differs`,
	   `${(100 * d2.diff).toFixed(2)}% of pixels`);

	/* reset */
	await clickButton(page, isSvg, 'Reset zoom', 'button.bp-reset');
	ok(await page.evaluate(() => window.bpFlame.zoom().depth === 0), `${tag}: reset zoom`);
	await page.mouse.click(cx, cy);
	await page.keyboard.press('Escape');
	ok(await page.evaluate(() => window.bpFlame.zoom().depth === 0), `${tag}: Esc resets zoom`);

	/* search: a piece of the name as text, the whole name as a regex, a broken regex */
	const before = await page.evaluate(highlighted, MATCH_FILL);
	let m = await runSearch(page, isSvg, target.name.slice(1, -1) || target.name, false);
	ok(/^matched \d+(\.\d+)?% of (on-CPU|off-CPU|wall-clock)/.test(m || ''),
	   `${tag}: text search shows the matched share`, m);
	const hl = await page.evaluate(highlighted, MATCH_FILL);
	ok(before === 0 && hl > 0, `${tag}: matches highlighted`, `${hl} highlighted`);
	m = await runSearch(page, isSvg, '^' + escapeRegex(target.name) + '$', true);
	const pct = parseFloat((m || '').replace(/^matched /, ''));
	ok(/^matched /.test(m || '') && pct > 0, `${tag}: regex search`, m);
	m = await runSearch(page, isSvg, '([', true);
	ok(m === 'invalid regular expression', `${tag}: a bad regex is reported, not thrown`, m);
	await runSearch(page, isSvg, target.name, false);

	/* views (a diff has only the wall-clock one) */
	if (api.kind === 'diff') {
		const sel = isSvg ? '.bp-btn' : 'button[data-view]';

		ok(await page.locator(sel, { hasText: 'on-CPU' }).count() === 0,
		   `${tag}: a diff offers no view switch`);
	} else {
		await testViews(page, helper, tag, isSvg, api.view);
	}

	ok(errors.length === 0, `${tag}: no console errors`, errors.join('; '));
	ok(requests.length === 0, `${tag}: no network requests`, requests.join(' '));
	await page.close();
}

/* every other view that has data: the picture changes and the search follows */
async function testViews(page, helper, tag, isSvg, start) {
	const labels = { on: 'on-CPU', off: 'off-CPU', wall: 'wall-clock' };
	let switched = 0;

	for (const v of ['on', 'off', 'wall'].filter((x) => x !== start)) {
		const sel = isSvg ? '.bp-btn' : `button[data-view="${v}"]`;
		const button = page.locator(sel, { hasText: labels[v] }).first();
		const off = isSvg ? /bp-off/.test(await button.getAttribute('class'))
				  : await button.isDisabled();

		if (off)
			continue;
		const shotA = await chartShot(page);
		await button.click();
		const now = await page.evaluate(() => window.bpFlame.view());
		const shotB = await chartShot(page);
		const dv = await pngStats(helper, shotA, shotB);
		const m = await matchedText(page, isSvg);
		ok(now === v && dv.diff > 0.001 && m.includes('of ' + labels[v]),
		   `${tag}: switch to the ${labels[v]} view`,
		   `view ${now}, ${(100 * dv.diff).toFixed(2)}% pixels changed, "${m}"`);
		switched++;
	}
	ok(switched >= 1, `${tag}: at least one other view to switch to`);
	await page.keyboard.press(start === 'on' ? '1' : start === 'off' ? '2' : '3');
	ok(await page.evaluate(() => window.bpFlame.view()) === start, `${tag}: view keys`);
}

const profileDir = mkdtempSync(path.join(tmpdir(), 'bp-chromium-'));
let context;
try {
	context = await chromium.launchPersistentContext(profileDir, {
		executablePath: CHROMIUM,
		headless: true,
		args: CHROMIUM_ARGS,
		viewport: { width: 1280, height: 1400 },
		offline: true
	});
	const helper = await context.newPage();

	for (const f of files) {
		try {
			await testFile(context, helper, f);
		} catch (e) {
			ok(false, `${path.basename(f)}: no exception`, e.stack || String(e));
		}
	}
} finally {
	if (context)
		await context.close();
	rmSync(profileDir, { recursive: true, force: true });
}
console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
process.exit(failures ? 1 : 0);
