#!/usr/bin/env node
// SPDX-License-Identifier: GPL-2.0
/*
 * Real-browser checks of `boundprof scale` plots: headless Chromium driven by
 * playwright-core, loading each file from file:// with no network.
 *
 *   node tests/browser/scale.test.mjs [--shot OUT.png] FILE.html|FILE.svg...
 *
 * For each file: loads without console errors or network requests, draws
 * something (the screenshot is not blank), has one marker per point in each
 * panel, and every marker sits where the axes say its value is: its x on the
 * tick of its worker count, its y read off the panel's own tick marks (log2
 * or linear, as the panel declares) equal to the speedup or efficiency in the
 * embedded data; the ideal line runs through speedup = workers and through
 * efficiency 1; points with more workers than CPUs lie in the shaded band.
 * The .html also: a tooltip on hover with the point's numbers, the table's
 * rows and the closing line as in the data. --shot saves a screenshot of the
 * first file.
 *
 * Needs `npm ci` in tests/browser and Debian's chromium (BP_CHROMIUM overrides
 * /usr/bin/chromium). Exit status 0 when every check passed.
 */
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const CHROMIUM = process.env.BP_CHROMIUM || '/usr/bin/chromium';
/* without these, Chromium keeps calling home: refused connections flood a closed network */
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
	'--no-first-run', '--disable-background-networking', '--disable-component-update',
	'--disable-sync'];
const PX = 1.5;		/* how far a marker may sit from where its value belongs */

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

let chromium;
try {
	({ chromium } = await import('playwright-core'));
} catch (e) {
	console.error('scale.test: playwright-core is not installed: run `npm ci` in ' +
		      'tests/browser (or the test dependency install)\n' + e.message);
	process.exit(2);
}
if (!existsSync(CHROMIUM)) {
	console.error(`scale.test: no Chromium at ${CHROMIUM}: apt-get install chromium ` +
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
		files.length = 0, i = args.length;
	else
		files.push(args[i]);
}
if (!files.length) {
	console.error('usage: node scale.test.mjs [--shot OUT.png] FILE.html|FILE.svg...');
	process.exit(2);
}

/* everything the checks need, read from the page as a reader would see it */
function readPage() {
	const holder = document.getElementById('bp-scale-data');
	const data = JSON.parse(holder.textContent);
	const mid = (r) => ({ x: (r.left + r.right) / 2, y: (r.top + r.bottom) / 2 });
	const panels = [...document.querySelectorAll('.bp-panel')].map((g) => {
		const svg = g.ownerSVGElement;
		const toScreen = (x, y) => {
			const p = svg.createSVGPoint();

			p.x = x;
			p.y = y;
			return p.matrixTransform(g.getScreenCTM());
		};
		const ideal = g.querySelector('.bp-ideal');
		const over = g.querySelector('.bp-over');

		return {
			name: g.getAttribute('data-panel'),
			yscale: g.getAttribute('data-yscale'),
			xscale: g.getAttribute('data-xscale'),
			yticks: [...g.querySelectorAll('.bp-ygrid')].map((l) => ({
				v: +l.getAttribute('data-v'), p: mid(l.getBoundingClientRect()).y })),
			xticks: [...g.querySelectorAll('.bp-xgrid')].map((l) => ({
				v: +l.getAttribute('data-v'), p: mid(l.getBoundingClientRect()).x })),
			points: [...g.querySelectorAll('.bp-point')].map((c) => ({
				i: +c.getAttribute('data-i'), ...mid(c.getBoundingClientRect()) })),
			ideal: ideal ? [...ideal.points].map((p) => toScreen(p.x, p.y))
				.map((p) => ({ x: p.x, y: p.y })) : [],
			over: over ? over.getBoundingClientRect().left : null
		};
	});
	return { data, panels, ready: !!window.bpScale || document.documentElement.tagName === 'svg' };
}

/* the value at pixel p on an axis, from its ticks: log2 or linear between the two nearest */
function valueAt(ticks, scale, p) {
	const t = [...ticks].sort((a, b) => a.p - b.p);
	if (t.length < 2)
		return NaN;
	let a = t[0], b = t[1];
	for (let i = 1; i < t.length; i++) {
		a = t[i - 1];
		b = t[i];
		if (p <= b.p)
			break;
	}
	const f = (p - a.p) / (b.p - a.p);
	if (scale === 'log2')
		return 2 ** (Math.log2(a.v) + f * (Math.log2(b.v) - Math.log2(a.v)));
	return a.v + f * (b.v - a.v);
}

/* the pixel of value v on an axis, the same way */
function pixelOf(ticks, scale, v) {
	const t = [...ticks].sort((a, b) => a.v - b.v);
	const g = (x) => scale === 'log2' ? Math.log2(x) : x;
	let a = t[0], b = t[1];
	for (let i = 1; i < t.length; i++) {
		a = t[i - 1];
		b = t[i];
		if (v <= b.v)
			break;
	}
	return a.p + (g(v) - g(a.v)) / (g(b.v) - g(a.v)) * (b.p - a.p);
}

async function notBlank(page, helper) {
	const png = await page.screenshot();
	return helper.evaluate(async (b64) => {
		const img = new Image();

		img.src = 'data:image/png;base64,' + b64;
		await img.decode();
		const c = document.createElement('canvas');
		c.width = img.width;
		c.height = img.height;
		const ctx = c.getContext('2d');
		ctx.drawImage(img, 0, 0);
		const d = ctx.getImageData(0, 0, c.width, c.height).data;
		const colours = new Set();
		for (let i = 0; i < d.length; i += 4)
			colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
		return colours.size;
	}, png.toString('base64'));
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
	await page.goto(pathToFileURL(abs).href);
	if (!isSvg)
		await page.waitForFunction(() => window.bpScale && window.bpScale.ready, null,
					   { timeout: 30000 }).catch(() => {});
	const st = await page.evaluate(readPage);
	const pts = st.data.points;

	ok(st.ready, `${tag}: page ready`, errors.join('; '));
	if (shot && file === files[0]) {
		const h = await page.evaluate(() =>
			Math.ceil(document.documentElement.getBoundingClientRect().height));
		const vp = page.viewportSize();

		await page.setViewportSize({ width: vp.width, height: Math.min(Math.max(h, 200), 4000) });
		await page.screenshot({ path: shot });
		await page.setViewportSize(vp);
		console.log(`#     screenshot saved to ${shot}`);
	}
	const colours = await notBlank(page, helper);
	ok(colours >= 8, `${tag}: drawn, not blank`, `${colours} colours`);
	ok(st.panels.length === 2 && st.panels[0].name === 'speedup' &&
	   st.panels[1].name === 'efficiency', `${tag}: a speedup and an efficiency panel`,
	   st.panels.map((p) => p.name).join(','));

	for (const pn of st.panels) {
		ok(pn.points.length === pts.length, `${tag}: ${pn.name}: one marker per point`,
		   `${pn.points.length} markers, ${pts.length} points`);
		const bad = [];
		for (const m of pn.points) {
			const p = pts[m.i];
			const want = pn.name === 'speedup' ? p.speedup : p.efficiency;
			const wx = pixelOf(pn.xticks, pn.xscale, p.workers);
			const wy = pixelOf(pn.yticks, pn.yscale, want);

			if (Math.abs(m.x - wx) > PX || Math.abs(m.y - wy) > PX)
				bad.push(`${p.workers} workers: at (${m.x.toFixed(1)},${m.y.toFixed(1)}), ` +
					 `${want.toFixed(3)} belongs at (${wx.toFixed(1)},${wy.toFixed(1)})`);
		}
		ok(pn.points.length && !bad.length,
		   `${tag}: ${pn.name}: every marker where the axes put its value`, bad.join('; '));
		/* the ideal: speedup equal to the workers; efficiency 1 */
		const ibad = pn.ideal.filter((q) => {
			const x = valueAt(pn.xticks, pn.xscale, q.x);
			const y = valueAt(pn.yticks, pn.yscale, q.y);

			return pn.name === 'speedup' ? Math.abs(y / x - 1) > 0.02 : Math.abs(y - 1) > 0.01;
		});
		ok(pn.ideal.length >= 2 && !ibad.length, `${tag}: ${pn.name}: the ideal line`,
		   JSON.stringify(pn.ideal));
		if (pts.some((p) => p.oversubscribed)) {
			const edge = pixelOf(pn.xticks, pn.xscale, st.data.cpus);
			const inside = pn.points.filter((m) => pts[m.i].oversubscribed)
				.every((m) => m.x > pn.over);
			const outside = pn.points.filter((m) => !pts[m.i].oversubscribed)
				.every((m) => m.x <= pn.over + PX);

			ok(pn.over !== null && Math.abs(pn.over - edge) <= PX && inside && outside,
			   `${tag}: ${pn.name}: more workers than ${st.data.cpus} CPUs shaded`,
			   `band from ${pn.over}, ${st.data.cpus} CPUs at ${edge}`);
		}
	}

	if (!isSvg) {
		/* tooltip: the numbers of the point hovered */
		const i = pts.length - 1;
		await page.locator(`.bp-panel[data-panel="speedup"] .bp-point[data-i="${i}"]`).hover();
		const tip = await page.waitForFunction(() => {
			const t = document.querySelector('.bp-tip');

			return t && !t.hidden ? t.textContent : null;
		}, null, { timeout: 5000 }).then((h) => h.jsonValue(), () => null);
		const p = pts[i];
		ok(tip && tip.includes(`${p.workers} worker`) && tip.includes(p.speedup.toFixed(2)) &&
		   tip.includes(p.efficiency.toFixed(2)) && tip.includes(p.verdict),
		   `${tag}: tooltip with the point's numbers`, JSON.stringify(tip));
		const rows = await page.evaluate(() => [...document.querySelectorAll('tr.bp-row')]
			.map((r) => [...r.cells].map((c) => c.textContent)));
		ok(rows.length === pts.length && rows.every((r, k) =>
			r[0].startsWith(String(pts[k].workers)) && r[1] === pts[k].wall_s.toFixed(3) &&
			r[5] === pts[k].speedup.toFixed(2) && r[6] === pts[k].efficiency.toFixed(2) &&
			r[8].startsWith(pts[k].verdict)),
		   `${tag}: the table holds the data`, JSON.stringify(rows));
		const concl = await page.locator('.bp-conclusion').textContent();
		ok(concl === st.data.conclusion, `${tag}: the closing line`, concl);
	}
	ok(errors.length === 0, `${tag}: no console errors`, errors.join('; '));
	ok(requests.length === 0, `${tag}: no network requests`, requests.join(' '));
	await page.close();
}

const profileDir = mkdtempSync(path.join(tmpdir(), 'bp-chromium-'));
let context;
try {
	context = await chromium.launchPersistentContext(profileDir, {
		executablePath: CHROMIUM,
		headless: true,
		args: CHROMIUM_ARGS,
		viewport: { width: 1000, height: 900 },
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
