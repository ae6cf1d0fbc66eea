/* SPDX-License-Identifier: GPL-2.0 */
/*
 * boundprof flame graph renderer. One script for both documents: in the .html
 * page it builds an HTML header and toolbar around an inline <svg>; in the
 * standalone .svg (no HTML elements, no text input) everything is SVG and
 * search asks with prompt(), as flamegraph.pl's does. No network, no
 * libraries: the file must work from file:// on a plane.
 *
 * The data (id="bp-data", written by agent/export/flame.c) is one tree, the
 * wall-clock one, in preorder: n = name index, c = number of children,
 * s = on-CPU samples and w = microseconds ending at the node; a diff has b =
 * BEFORE's total us instead of s. The three views are derived from it here:
 * on-CPU lifts the [on-cpu] subtrees up to the process and counts samples,
 * off-CPU drops them, wall-clock keeps everything.
 */
(function () {
	'use strict';

	var SVGNS = 'http://www.w3.org/2000/svg';
	var ROW = 16;		/* px per frame row */
	/*
	 * Frames narrower than this are not drawn (nor their children, which are
	 * narrower still): a 100k-stack profile has a million nodes but only a
	 * few thousand are wider than half a pixel, and the DOM stays small.
	 */
	var MIN_W = 0.5;
	var PAD = 10;
	var T_NAME = { FRAME: '0', KERNEL: '1', PROC: '2', CLASS: '3', ROOT: '4' };
	var VIEWS = {
		on: { label: 'on-CPU', key: '1' },
		off: { label: 'off-CPU', key: '2' },
		wall: { label: 'wall-clock', key: '3' }
	};
	var VIEW_ORDER = ['on', 'off', 'wall'];
	var MATCH_FILL = 'rgb(230,0,230)';
	var t0 = performance.now();

	var D = JSON.parse(document.getElementById('bp-data').textContent);
	var parseMs = performance.now() - t0;
	var IS_SVG = document.documentElement.namespaceURI === SVGNS;
	var DIFF = D.kind === 'diff';
	var names = D.names, types = D.types;
	/*
	 * The wait classes in the order of the class numbers (bpf/wait_classes.h
	 * through flame.c): frame, legend text and colours. No list of our own,
	 * so a class added to the table is drawn without a change here.
	 */
	var CLASSES = D.classes;
	var CLASS_FRAMES = CLASSES.map(function (c) { return c.frame; });
	var nameClass = new Int8Array(names.length).fill(-1);
	var i;

	for (i = 0; i < names.length; i++)
		if (types.charAt(i) === T_NAME.CLASS)
			nameClass[i] = CLASS_FRAMES.indexOf(names[i]);

	/* ------------------------------------------------------------ data */

	var src;
	var views = {};
	var procVerdict = {};

	(D.procs || []).forEach(function (p) { procVerdict[p.name] = p; });

	/*
	 * The columns are strings of base-32 numbers (flame.c put_code):
	 * a character from the first half of the alphabet ends a number, one
	 * from the second half carries 5 more significant bits.
	 */
	var ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_';
	var DIGIT = new Int8Array(128).fill(-1);

	for (i = 0; i < 64; i++)
		DIGIT[ALPHABET.charCodeAt(i)] = i;
	src = decode(D.tree);
	var decodeMs = performance.now() - t0 - parseMs;

	function unpack(str, out) {
		var k, d, acc = 0, n = 0;

		for (k = 0; k < str.length; k++) {
			d = DIGIT[str.charCodeAt(k)];
			if (d < 32) {
				out[n++] = acc * 32 + d;
				acc = 0;
			} else {
				acc = acc * 32 + d - 32;
			}
		}
		return n;
	}

	/* a sparse column, (distance from the previous listed node, value) pairs, into out */
	function unpackSparse(str, out) {
		var pairs = new Float64Array(str.length), n = unpack(str, pairs), at = 0;

		for (var k = 0; k + 1 < n; k += 2) {
			at += pairs[k];
			out[at] = pairs[k + 1];
		}
	}

	/*
	 * The source tree as typed arrays. Memory is what costs here (first
	 * touches of a page are slow in VMs), so the self values are read
	 * straight into the totals, the child counts are never stored, and the
	 * wall view shares these arrays.
	 */
	function decode(t) {
		var N = t.nodes, n = new Int32Array(N), parent = new Int32Array(N);
		var size = new Int32Array(N);
		var depth = new Uint16Array(N), cls = new Int8Array(N);
		var totS = new Float64Array(N), totW = new Float64Array(N), b = null;
		var str = t.c, k = 0, stack = [], left = [], sp = 0, j, p, d, cnt;
		var maxDepth = 0, allW = true;

		unpack(t.n, n);
		if (t.s !== undefined)
			unpackSparse(t.s, totS);
		unpackSparse(t.w, totW);
		if (t.b !== undefined) {
			b = new Float64Array(N);
			unpack(t.b, b);
		}
		for (j = 0; j < N; j++) {
			for (cnt = 0; (d = DIGIT[str.charCodeAt(k++)]) >= 32;)
				cnt = cnt * 32 + d - 32;
			cnt = cnt * 32 + d;
			while (sp && left[sp - 1] === 0)
				sp--;
			if (sp) {
				p = stack[sp - 1];
				left[sp - 1]--;
				parent[j] = p;
				depth[j] = depth[p] + 1;
				cls[j] = nameClass[n[j]] >= 0 ? nameClass[n[j]] : cls[p];
				if (depth[j] > maxDepth)
					maxDepth = depth[j];
			} else {
				parent[j] = -1;
				cls[j] = -1;
			}
			if (cnt > 0) {
				stack[sp] = j;
				left[sp++] = cnt;
			}
		}
		for (j = N - 1; j >= 0; j--) {
			size[j] += 1;
			p = parent[j];
			if (p >= 0) {
				size[p] += size[j];
				totS[p] += totS[j];
				totW[p] += totW[j];
			}
			if (!(totW[j] > 0))
				allW = false;
		}
		return { N: N, n: n, parent: parent, size: size, depth: depth, cls: cls, b: b,
			 totS: totS, totW: totW, maxDepth: maxDepth, allW: allW };
	}

	function srcKids(j, f) {
		for (var k = j + 1, e = j + src.size[j]; k < e; k += src.size[k])
			f(k);
	}

	function isOnCpuClass(j) {
		return nameClass[src.n[j]] === 0;
	}

	/* what a process is worth in the off-CPU view: all but its [on-cpu] subtree */
	function offTotal(p) {
		var off = src.totW[p];

		srcKids(p, function (q) {
			if (isOnCpuClass(q))
				off -= src.totW[q];
		});
		return off;
	}

	/* the total of a view straight from the source tree, without building it */
	function viewTotal(mode) {
		var off = 0;

		if (mode === 'on')
			return src.totS[0];
		if (mode === 'wall')
			return src.totW[0];
		srcKids(0, function (p) { off += Math.max(0, offTotal(p)); });
		return off;
	}

	/*
	 * Build a view: typed arrays in preorder (name, total, subtree size,
	 * parent, depth, wait class), children in the source's (name) order.
	 * Dropping zero-valued subtrees changes no total but the process's and
	 * the root's, which are set here. Linear in the source: subtrees are
	 * contiguous in preorder, so they are copied or skipped without recursion.
	 */
	function derive(mode) {
		var useS = mode === 'on', N = src.N, tot = useS ? src.totS : src.totW, n = 0, j;
		var v = {
			mode: mode,
			label: DIFF ? 'wall-clock' : VIEWS[mode].label,
			unit: useS ? 'samples' : 'us',
			maxDepth: 0
		};

		if (mode === 'wall' && src.allW) {
			v.n = N;
			v.name = src.n;
			v.tot = src.totW;
			v.parent = src.parent;
			v.depth = src.depth;
			v.cls = src.cls;
			v.size = src.size;
			v.before = src.b;
			v.maxDepth = src.maxDepth;
			finishView(v);
			return v;
		}
		var from = new Int32Array(N), o = {
			tot: new Float64Array(N),
			parent: new Int32Array(N),
			depth: new Uint16Array(N),
			cls: new Int8Array(N)
		};
		/* open ancestors while copying: where their subtrees end, their copies, classes */
		var aEnd = new Int32Array(256), aOut = new Int32Array(256);
		var aCls = new Int8Array(256);

		function push(jj, par, depth, cls, total) {
			from[n] = jj;
			o.tot[n] = total;
			o.parent[n] = par;
			o.depth[n] = depth;
			o.cls[n] = cls;
			return n++;
		}
		/* the subtree at j0, without zero-valued frames, under par0 */
		function copy(j0, par0, depth0, cls0) {
			var end = j0 + src.size[j0], sp = 0, jj = j0, cls, me;

			while (jj < end) {
				if (!(tot[jj] > 0)) {
					jj += src.size[jj];
					continue;
				}
				while (sp && jj >= aEnd[sp - 1])
					sp--;
				cls = nameClass[src.n[jj]];
				if (cls < 0)
					cls = sp ? aCls[sp - 1] : cls0;
				me = push(jj, sp ? aOut[sp - 1] : par0, depth0 + sp, cls, tot[jj]);
				if (sp === aEnd.length) {
					aEnd = grow(aEnd);
					aOut = grow(aOut);
					aCls = grow(aCls);
				}
				aEnd[sp] = jj + src.size[jj];
				aOut[sp] = me;
				aCls[sp++] = cls;
				jj++;
			}
		}

		var root = push(0, -1, 0, -1, 0);

		srcKids(0, function (p) {
			var total = mode === 'off' ? offTotal(p) : tot[p], me;

			if (!(total > 0))
				return;
			o.tot[root] += total;
			if (mode === 'wall') {
				copy(p, root, 1, -1);
				return;
			}
			me = push(p, root, 1, -1, total);
			srcKids(p, function (q) {
				if (mode === 'off' && !isOnCpuClass(q))
					copy(q, me, 2, -1);
				/* on-CPU: the [on-cpu] frames' children move up to the process */
				if (mode === 'on' && isOnCpuClass(q))
					srcKids(q, function (r) { copy(r, me, 2, 0); });
			});
		});

		v.n = n;
		v.name = new Int32Array(n);
		for (j = 0; j < n; j++)
			v.name[j] = src.n[from[j]];
		if (src.b) {
			v.before = new Float64Array(n);
			for (j = 0; j < n; j++)
				v.before[j] = src.b[from[j]];
		}
		v.tot = o.tot.slice(0, n);
		v.parent = o.parent.slice(0, n);
		v.depth = o.depth.slice(0, n);
		v.cls = o.cls.slice(0, n);
		v.size = new Int32Array(n);
		for (j = n - 1; j >= 0; j--) {
			v.size[j] += 1;
			if (v.parent[j] >= 0)
				v.size[v.parent[j]] += v.size[j];
			if (v.depth[j] > v.maxDepth)
				v.maxDepth = v.depth[j];
		}
		finishView(v);
		return v;
	}

	function finishView(v) {
		if (DIFF) {
			/* full colour for the largest change, and for any of 1 point or more */
			diffScale = 0.01;
			for (var j = 1; j < v.n; j++)
				diffScale = Math.max(diffScale, Math.abs(diffShares(v, j).delta));
		}
	}

	/* the value of frames ending at j: its total less its children's */
	function selfValue(v, j) {
		var s = v.tot[j];

		kids(v, j, function (k) { s -= v.tot[k]; });
		return s;
	}

	function grow(a) {
		var b = new a.constructor(a.length * 2);

		b.set(a);
		return b;
	}

	function getView(mode) {
		if (!views[mode]) {
			var d0 = performance.now();

			views[mode] = derive(mode);
			api.deriveMs = performance.now() - d0;
		}
		return views[mode];
	}

	function kids(v, j, f) {
		for (var k = j + 1, e = j + v.size[j]; k < e; k += v.size[k])
			f(k);
	}

	/* ------------------------------------------------------------ state */

	var totals = {};

	VIEW_ORDER.forEach(function (m) { totals[m] = viewTotal(m); });

	var state = {
		mode: DIFF ? 'wall' : (VIEWS[D.initial] ? D.initial : 'wall'),
		zoom: 0,
		query: '',
		regex: false,
		matcher: null,
		badQuery: false
	};
	var matchCache = null;
	var api = { ready: false, loadMs: 0, parseMs: parseMs, decodeMs: decodeMs, deriveMs: 0,
		    renderMs: 0, renders: 0 };

	window.bpFlame = api;

	function view() {
		return getView(state.mode);
	}

	/* ------------------------------------------------------------ formatting */

	function fmtInt(x) {
		return String(Math.round(x)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
	}

	function fmtUs(us) {
		var s = us / 1e6;

		if (s >= 100)
			return s.toFixed(0) + ' s';
		if (s >= 10)
			return s.toFixed(1) + ' s';
		if (s >= 1)
			return s.toFixed(2) + ' s';
		if (us >= 1000)
			return (us / 1000).toFixed(us >= 100000 ? 0 : us >= 10000 ? 1 : 2) + ' ms';
		return fmtInt(us) + ' \u00b5s';
	}

	function fmtValue(v, x) {
		if (v.unit !== 'samples')
			return fmtUs(x);
		var t = fmtInt(x) + (x === 1 ? ' sample' : ' samples');

		if (D.meta && D.meta.s_per_sample > 0)
			t += ' (\u2248' + fmtUs(x * D.meta.s_per_sample * 1e6) + ' on-CPU)';
		return t;
	}

	function fmtPct(f) {
		var p = 100 * f;

		if (p === 0 || p >= 0.1 || p <= -0.1)
			return p.toFixed(1) + '%';
		return p.toPrecision(2) + '%';
	}

	/* ------------------------------------------------------------ colours */

	var hashCache = new Float64Array(names.length).fill(-1);

	/* a stable number in [0, 1) per name, so a function keeps its shade in every view */
	function nameHash(ni) {
		if (hashCache[ni] < 0) {
			var s = names[ni], h = 2166136261;

			for (var k = 0; k < s.length; k++)
				h = Math.imul(h ^ s.charCodeAt(k), 16777619);
			hashCache[ni] = (h >>> 0) / 4294967296;
		}
		return hashCache[ni];
	}

	function hsl(h, s, l) {
		return 'hsl(' + h.toFixed(0) + ',' + s.toFixed(0) + '%,' + l.toFixed(1) + '%)';
	}

	var ROOT_FILL = hsl(40, 14, 84), PROC_FILL = hsl(40, 32, 77);

	function classFill(cls, kernel, a) {
		/* [hue, hue spread, saturation, lightness]; kernel frames are lighter */
		var p = CLASSES[cls][kernel ? 'kernel' : 'user'];
		var b = (a * 7.31) % 1;

		return hsl(p[0] + p[1] * a, p[2], p[3] + 7 * b - 3.5);
	}

	function classSwatch(cls, kernel) {
		return classFill(cls, kernel, 0.5);
	}

	var diffScale = 0.01;

	function diffShares(v, j) {
		var after = v.tot[0] > 0 ? v.tot[j] / v.tot[0] : 0;
		var bt = D.before ? D.before.total_us : 0, before = bt > 0 ? v.before[j] / bt : 0;

		return { after: after, before: before, delta: after - before };
	}

	function diffFill(delta) {
		var r = Math.min(1, Math.abs(delta) / diffScale);

		/* under 0.05 points is noise: the same share, neutral */
		if (Math.abs(delta) < 0.0005)
			return hsl(0, 0, 88);
		return delta > 0 ? hsl(0, 78, 93 - 45 * r) : hsl(215, 78, 93 - 45 * r);
	}

	function fill(v, j) {
		var ni = v.name[j], t = types.charAt(ni);

		if (state.matcher && v.depth[j] > 0 && matches(ni))
			return MATCH_FILL;
		if (DIFF)
			return diffFill(diffShares(v, j).delta);
		if (t === T_NAME.ROOT)
			return ROOT_FILL;
		if (t === T_NAME.PROC)
			return PROC_FILL;
		var cls = v.cls[j] < 0 ? 0 : v.cls[j];

		var u = CLASSES[cls].user;

		if (t === T_NAME.CLASS)
			return hsl(u[0] + u[1] / 2, u[2], u[3] - 10);
		return classFill(cls, t === T_NAME.KERNEL, nameHash(ni));
	}

	/* ------------------------------------------------------------ search */

	function setQuery(q, regex) {
		state.query = q;
		state.regex = regex;
		state.badQuery = false;
		state.matcher = null;
		matchCache = null;
		if (!q)
			return;
		if (regex) {
			try {
				var re = new RegExp(q);

				state.matcher = function (s) { return re.test(s); };
			} catch (e) {
				state.badQuery = true;
				return;
			}
		} else {
			var lq = q.toLowerCase();

			state.matcher = function (s) { return s.toLowerCase().indexOf(lq) >= 0; };
		}
		matchCache = new Int8Array(names.length).fill(-1);
	}

	function matches(ni) {
		if (matchCache[ni] < 0)
			matchCache[ni] = state.matcher(names[ni]) ? 1 : 0;
		return matchCache[ni] === 1;
	}

	/* the value under top in matching frames, each counted once (not under another match) */
	function matchedValue(v, top) {
		var sum = 0, j = top, end = top + v.size[top];

		while (j < end) {
			if (v.depth[j] > 0 && matches(v.name[j])) {
				sum += v.tot[j];
				j += v.size[j];
			} else {
				j++;
			}
		}
		return sum;
	}

	function matchedText() {
		if (state.badQuery)
			return 'invalid regular expression';
		if (!state.matcher)
			return '';
		var v = view(), total = v.tot[0];

		if (!total)
			return 'matched 0% of ' + v.label;
		var t = 'matched ' + fmtPct(matchedValue(v, 0) / total) + ' of ' + v.label;

		if (state.zoom > 0 && v.tot[state.zoom] > 0)
			t += ' (' + fmtPct(matchedValue(v, state.zoom) / v.tot[state.zoom]) +
			     ' of ' + names[v.name[state.zoom]] + ')';
		return t;
	}

	/* ------------------------------------------------------------ tooltip text */

	function describe(j) {
		var v = view(), ni = v.name[j], lines = [names[ni]], t = types.charAt(ni);
		var total = v.tot[0], mod = D.module ? D.module[ni] : -1;

		if (t === T_NAME.KERNEL)
			lines[0] += '  (kernel)';
		else if (mod >= 0)
			lines[0] += '  (' + D.modules[mod] + ')';
		if (DIFF) {
			var sh = diffShares(v, j), sign = sh.delta >= 0 ? '+' : '\u2212';

			lines.push('after:  ' + fmtUs(v.tot[j]) + ', ' + fmtPct(sh.after) +
				   ' of the total');
			lines.push('before: ' + (v.before[j] > 0 ? fmtUs(v.before[j]) + ', ' +
						 fmtPct(sh.before) + ' of the total' : 'absent'));
			lines.push('change: ' + sign + (100 * Math.abs(sh.delta)).toFixed(2) +
				   ' percentage points' + (sh.delta > 0 ? ' (grew)' : sh.delta < 0 ?
				   ' (shrank)' : ''));
			return lines;
		}
		lines.push(fmtValue(v, v.tot[j]) + ', ' + fmtPct(total ? v.tot[j] / total : 0) +
			   ' of ' + v.label);
		var p = j;

		while (p > 0 && v.depth[p] > 1)
			p = v.parent[p];
		if (p > 0 && p !== j && v.tot[p] > 0)
			lines.push(fmtPct(v.tot[j] / v.tot[p]) + ' of ' + names[v.name[p]]);
		if (state.zoom > 0 && j !== state.zoom && state.zoom !== p &&
		    isUnder(v, j, state.zoom))
			lines.push(fmtPct(v.tot[j] / v.tot[state.zoom]) + ' of the zoomed ' +
				   names[v.name[state.zoom]]);
		var self = selfValue(v, j);

		if (self > 0 && self !== v.tot[j])
			lines.push('self: ' + fmtValue(v, self) + ', ' +
				   fmtPct(total ? self / total : 0));
		if (v.cls[j] > 0 && t !== T_NAME.CLASS)
			lines.push('waiting: ' + CLASSES[v.cls[j]].text);
		return lines;
	}

	function isUnder(v, j, a) {
		return j >= a && j < a + v.size[a];
	}

	/* ------------------------------------------------------------ verdict */

	/* the verdict of the process the zoom is in, else the whole recording's */
	function currentVerdict() {
		var v = view(), j = state.zoom;

		while (j > 0 && v.depth[j] > 1)
			j = v.parent[j];
		if (j > 0 && procVerdict[names[v.name[j]]])
			return { who: names[v.name[j]], v: procVerdict[names[v.name[j]]] };
		if (D.verdict)
			return { who: 'whole recording', v: D.verdict };
		return null;
	}

	function confidenceText(v) {
		return v.confidence + ' confidence' + (v.second ? '; runner-up: ' + v.second : '');
	}

	function metaText() {
		var m = D.meta || {}, parts = [];

		if (DIFF) {
			parts.push('differential: this recording (after, ' + fmtUs(totals.wall) +
				   ' wall-clock) against before (' + fmtUs(D.before.total_us) +
				   ')');
			return parts.join('');
		}
		if (m.duration_s)
			parts.push(m.duration_s.toFixed(2) + ' s');
		if (m.ncpus)
			parts.push(m.ncpus + ' CPUs');
		if (m.hz)
			parts.push(m.event + ' at ' + m.hz + ' Hz');
		parts.push(fmtInt(m.samples || 0) + ' on-CPU samples');
		parts.push(m.offcpu ? 'off-CPU traced' : 'off-CPU not traced');
		if (m.system_wide)
			parts.push('system-wide');
		return parts.join(', ');
	}

	/* ------------------------------------------------------------ legend */

	function legendItems() {
		if (DIFF) {
			var pts = (100 * diffScale).toFixed(diffScale < 0.1 ? 1 : 0) + ' points';

			return [
				{ fill: diffFill(-diffScale), text: 'share shrank, up to ' + pts },
				{ fill: diffFill(-diffScale / 3), text: 'shrank a little' },
				{ fill: diffFill(0), text: 'same share (within 0.05 points)' },
				{ fill: diffFill(diffScale / 3), text: 'grew a little' },
				{ fill: diffFill(diffScale),
				  text: 'share grew, up to ' + pts + ' (or new)' },
				{ fill: MATCH_FILL, text: 'search match' }
			];
		}
		/* two squares per class: user frames, then kernel frames (lighter, marked [k]) */
		var items = [], last = state.mode === 'on' ? 1 : CLASSES.length;

		for (var c = state.mode === 'off' ? 1 : 0; c < last; c++)
			items.push({ fill: classSwatch(c, false), fill2: classSwatch(c, true),
				     text: CLASSES[c].text });
		items.push({ fill: PROC_FILL, text: 'process' });
		items.push({ fill: MATCH_FILL, text: 'search match' });
		items.push({ text: '(second square: kernel frames [k])' });
		return items;
	}

	var HELP = 'Click a frame to zoom in, click a dimmed frame below to zoom out; ' +
		   'Esc or "Reset zoom" to reset. Search: / or Ctrl+F (text, or a regular ' +
		   'expression with "regex").' + (DIFF ? ' Shares are of all wall-clock time ' +
		   'in each recording.' : ' Views: 1 on-CPU, 2 off-CPU, 3 wall-clock.');

	/* ------------------------------------------------------------ drawing */

	var ui;			/* the HTML or SVG skin */
	var charW = 7.2;	/* width of one monospace character at 12px, measured */

	function el(tag, attrs, parent) {
		var e = document.createElementNS(SVGNS, tag);

		for (var k in attrs)
			e.setAttribute(k, attrs[k]);
		if (parent)
			parent.appendChild(e);
		return e;
	}

	function measureChar(parentSvg) {
		var t = el('text', { 'class': 'bp-f', x: -1000, y: -1000 }, parentSvg);
		var s = 'abcdefghijklmnopqrstuvwxyz_0123456789';

		t.textContent = s;
		var w = t.getComputedTextLength();

		parentSvg.removeChild(t);
		return w > 0 ? w / s.length : 7.2;
	}

	/* draw the view into group g, width W; returns the chart height */
	function drawChart(g, W) {
		var v = view(), z = state.zoom, H = (v.maxDepth + 1) * ROW + 4;
		var frag = document.createDocumentFragment();
		var drawn = 0;

		while (g.firstChild)
			g.removeChild(g.firstChild);
		if (!(v.tot[0] > 0)) {
			var msg = el('text', { 'class': 'bp-empty', x: W / 2, y: 30,
					       'text-anchor': 'middle' }, g);

			msg.textContent = state.mode === 'off' && D.meta && !D.meta.offcpu ?
				'off-CPU time was not traced in this recording' :
				'nothing was recorded for the ' + v.label + ' view';
			return 50;
		}
		var scale = W / v.tot[z];

		function frame(j, x, w, anc) {
			var y = H - (v.depth[j] + 1) * ROW, t = types.charAt(v.name[j]);
			var cls = 'bp-f' + (anc ? ' bp-anc' : '') +
				  (t === T_NAME.CLASS ? ' bp-class' : '');
			var fg = el('g', { 'class': cls });

			el('rect', { x: x.toFixed(2), y: y,
				     width: Math.max(w - 0.5, 0.5).toFixed(2),
				     height: ROW - 1, rx: 1.5, fill: fill(v, j) }, fg);
			var room = Math.floor((w - 6) / charW);

			if (room >= 3) {
				var label = names[v.name[j]];

				if (label.length > room)
					label = label.slice(0, room - 2) + '..';
				el('text', { x: (x + 3).toFixed(2), y: y + ROW - 4.5 }, fg)
					.textContent = label;
			}
			fg.bpI = j;
			frag.appendChild(fg);
			drawn++;
		}
		function draw(j, x) {
			var w = v.tot[j] * scale;

			if (w < MIN_W)
				return;
			frame(j, x, w, false);
			var cx = x;

			kids(v, j, function (k) {
				draw(k, cx);
				cx += v.tot[k] * scale;
			});
		}
		for (var a = v.parent[z]; a >= 0; a = v.parent[a])
			frame(a, 0, W, true);
		draw(z, 0);
		g.appendChild(frag);
		api.drawn = drawn;
		return H;
	}

	function render() {
		var r0 = performance.now();

		ui.render();
		api.renderMs = performance.now() - r0;
		api.renders++;
	}

	/* ------------------------------------------------------------ actions */

	function zoomTo(j) {
		state.zoom = j;
		render();
	}

	function resetZoom() {
		zoomTo(0);
	}

	/* the zoomed frame's names, without class frames, to find it again in another view */
	function zoomPath(v) {
		var path = [];

		for (var j = state.zoom; j > 0; j = v.parent[j])
			if (types.charAt(v.name[j]) !== T_NAME.CLASS)
				path.unshift(v.name[j]);
		return path;
	}

	function findPath(v, path) {
		var j = 0;

		for (var p = 0; p < path.length; p++) {
			var found = -1;

			kids(v, j, function (k) {
				if (found >= 0)
					return;
				if (v.name[k] === path[p])
					found = k;
				else if (types.charAt(v.name[k]) === T_NAME.CLASS)
					kids(v, k, function (m) {
						if (found < 0 && v.name[m] === path[p])
							found = m;
					});
			});
			if (found < 0)
				break;
			j = found;
		}
		return j;
	}

	function setView(mode) {
		if (DIFF || !VIEWS[mode] || mode === state.mode)
			return;
		var path = zoomPath(view());

		state.mode = mode;
		state.zoom = findPath(view(), path);
		render();
	}

	function search(q, regex) {
		setQuery(q, regex);
		render();
	}

	function onKey(e) {
		var typing = e.target && /^input$/i.test(e.target.tagName || '');

		if ((e.ctrlKey || e.metaKey) && (e.key === 'f' || e.key === 'F')) {
			e.preventDefault();
			ui.askSearch();
		} else if (e.key === 'Escape') {
			if (typing) {
				ui.clearSearch();
			} else if (state.zoom > 0) {
				resetZoom();
			} else if (state.query) {
				ui.clearSearch();
			}
		} else if (!typing && !e.ctrlKey && !e.metaKey && !e.altKey) {
			if (e.key === '/') {
				e.preventDefault();
				ui.askSearch();
			} else {
				VIEW_ORDER.forEach(function (m) {
					if (e.key === VIEWS[m].key)
						setView(m);
				});
			}
		}
	}

	function frameAt(target) {
		var g = target && target.closest ? target.closest('.bp-f') : null;

		return g && typeof g.bpI === 'number' ? g.bpI : -1;
	}

	function onChartClick(e) {
		var j = frameAt(e.target);

		if (j >= 0)
			zoomTo(j);
	}

	function viewButtonText(m) {
		var t = totals[m];

		if (!(t > 0))
			return VIEWS[m].label;
		return VIEWS[m].label + ' \u00b7 ' +
		       (m === 'on' ? fmtInt(t) + ' samples' : fmtUs(t));
	}

	/* ------------------------------------------------------------ HTML skin */

	function htmlSkin() {
		var app = document.getElementById('bp-app');
		var H = function (tag, cls, parent, text) {
			var e = document.createElement(tag);

			if (cls)
				e.className = cls;
			if (text !== undefined)
				e.textContent = text;
			if (parent)
				parent.appendChild(e);
			return e;
		};
		var head = H('header', 'bp-head', app);

		H('h1', null, head, D.title || 'boundprof');
		H('div', 'bp-meta', head, metaText());
		/* processes connected by pipes lead: which stage bounds them */
		(D.pipelines || []).forEach(function (t) {
			H('div', 'bp-pipeline', head, 'pipeline: ' + t);
		});
		var verdictBox = H('section', 'bp-verdict', head);
		var bar = H('div', 'bp-bar', app);
		var viewButtons = {};

		if (!DIFF) {
			var grp = H('span', 'bp-group', bar);

			grp.setAttribute('role', 'group');
			VIEW_ORDER.forEach(function (m) {
				var b = H('button', null, grp, viewButtonText(m));

				b.type = 'button';
				b.dataset.view = m;
				b.title = VIEWS[m].label + ' view (key ' + VIEWS[m].key + ')';
				b.disabled = !(totals[m] > 0);
				b.addEventListener('click', function () { setView(m); });
				viewButtons[m] = b;
			});
		}
		var reset = H('button', 'bp-reset', bar, 'Reset zoom');

		reset.type = 'button';
		reset.addEventListener('click', resetZoom);
		var input = H('input', 'bp-search', bar);

		input.type = 'text';
		input.placeholder = 'Search frames (/ or Ctrl+F)';
		input.setAttribute('aria-label', 'search frames');
		var rlabel = H('label', null, bar), regex = H('input', null, rlabel);

		regex.type = 'checkbox';
		regex.className = 'bp-regex';
		rlabel.appendChild(document.createTextNode(' regex'));
		var clear = H('button', 'bp-clear', bar, 'Clear');

		clear.type = 'button';
		var matched = H('span', 'bp-matched', bar);

		matched.setAttribute('aria-live', 'polite');
		var legend = H('div', 'bp-legend', app);
		var chartBox = H('div', 'bp-chart', app);
		var svg = el('svg', { id: 'bp-flame', width: 100, height: 100 }, chartBox);
		var g = el('g', {}, svg);
		var tip = H('div', 'bp-tip', document.body);

		H('div', 'bp-help', app, HELP);
		tip.hidden = true;
		charW = measureChar(svg);

		var timer = 0;

		function runSearch() {
			search(input.value, regex.checked);
		}
		input.addEventListener('input', function () {
			clearTimeout(timer);
			timer = setTimeout(runSearch, 120);
		});
		input.addEventListener('keydown', function (e) {
			if (e.key === 'Enter') {
				clearTimeout(timer);
				runSearch();
			}
		});
		regex.addEventListener('change', runSearch);
		clear.addEventListener('click', function () { skin.clearSearch(); });

		svg.addEventListener('click', onChartClick);
		svg.addEventListener('mousemove', function (e) {
			var j = frameAt(e.target);

			if (j < 0) {
				tip.hidden = true;
				return;
			}
			tip.textContent = '';
			describe(j).forEach(function (line, n) {
				if (n === 0)
					H('b', null, tip, line);
				else
					tip.appendChild(document.createTextNode('\n' + line));
			});
			tip.hidden = false;
			var x = e.clientX + 14, y = e.clientY + 16;
			var r = tip.getBoundingClientRect();

			if (x + r.width > window.innerWidth - 4)
				x = Math.max(4, e.clientX - r.width - 10);
			if (y + r.height > window.innerHeight - 4)
				y = Math.max(4, e.clientY - r.height - 10);
			tip.style.left = x + 'px';
			tip.style.top = y + 'px';
		});
		svg.addEventListener('mouseleave', function () { tip.hidden = true; });
		window.addEventListener('resize', function () {
			clearTimeout(timer);
			timer = setTimeout(render, 100);
		});

		function renderVerdict() {
			var cv = currentVerdict();

			verdictBox.textContent = '';
			verdictBox.hidden = !cv;
			if (!cv)
				return;
			var line = H('div', 'bp-verdict-line', verdictBox);

			H('span', 'bp-badge', line, cv.v['class']);
			line.appendChild(document.createTextNode(' ' + confidenceText(cv.v) + ' '));
			H('span', 'bp-verdict-who', line, '\u2014 ' + cv.who);
			var cols = H('div', 'bp-cols', verdictBox);

			var lists = [['Evidence', 'ul', cv.v.evidence],
				     ['Levers', 'ol', cv.v.levers]];

			lists.forEach(function (c) {
				if (!c[2] || !c[2].length)
					return;
				var d = H('div', null, cols);

				H('h3', null, d, c[0]);
				var list = H(c[1], null, d);

				c[2].forEach(function (t) { H('li', null, list, t); });
			});
		}

		var skin = {
			render: function () {
				renderVerdict();
				VIEW_ORDER.forEach(function (m) {
					var b = viewButtons[m], on = String(m === state.mode);

					if (b)
						b.setAttribute('aria-pressed', on);
				});
				legend.textContent = '';
				legendItems().forEach(function (it) {
					var s = H('span', null, legend);

					[it.fill, it.fill2].forEach(function (f) {
						if (f)
							H('span', 'bp-sw', s).style.background = f;
					});
					s.appendChild(document.createTextNode(it.text));
				});
				var W = Math.max(300, chartBox.clientWidth);

				svg.setAttribute('width', W);
				var h = drawChart(g, W);

				svg.setAttribute('height', h);
				matched.textContent = matchedText();
				input.classList.toggle('bp-bad', state.badQuery);
				reset.disabled = state.zoom === 0;
				tip.hidden = true;
			},
			askSearch: function () {
				input.focus();
				input.select();
			},
			clearSearch: function () {
				input.value = '';
				input.blur();
				search('', regex.checked);
			},
			chart: svg
		};
		return skin;
	}

	/* ------------------------------------------------------------ SVG skin */

	function svgSkin() {
		var root = document.documentElement;
		var ns = document.getElementById('bp-noscript');

		if (ns)
			ns.parentNode.removeChild(ns);
		root.setAttribute('width', '100%');
		root.removeAttribute('viewBox');
		var head = el('g', {}, root), chart = el('g', {}, root);
		var tip = el('g', { 'class': 'bp-s-tip' });
		var tipRect = el('rect', { rx: 3 }, tip), tipText = el('text', {}, tip);

		charW = measureChar(root);
		var sansW = (function () {
			var t = el('text', { 'class': 'bp-s-line', x: -1000, y: -1000 }, root);
			var s = 'The quick brown fox jumps over the lazy dog, 0123456789 times.';

			t.textContent = s;
			var w = t.getComputedTextLength() / s.length;

			root.removeChild(t);
			return w > 0 ? w : 6.5;
		})();

		function text(parent, x, y, cls, s) {
			var t = el('text', { x: x, y: y, 'class': cls }, parent);

			t.textContent = s;
			return t;
		}

		function wrap(s, width) {
			var max = Math.max(20, Math.floor(width / sansW)), out = [], line = '';

			s.split(' ').forEach(function (word) {
				if (line && line.length + 1 + word.length > max) {
					out.push(line);
					line = word;
				} else {
					line = line ? line + ' ' + word : word;
				}
			});
			if (line)
				out.push(line);
			return out;
		}

		function button(parent, x, y, label, cls, onclick) {
			var b = el('g', { 'class': 'bp-btn ' + (cls || ''), role: 'button' },
				   parent);
			var r = el('rect', { x: x, y: y, height: 22, rx: 3 }, b);
			var t = text(b, x + 8, y + 15.5, '', label);
			var w = t.getComputedTextLength() + 16;

			r.setAttribute('width', w);
			b.addEventListener('click', function (e) {
				e.stopPropagation();
				if (!/bp-off/.test(b.getAttribute('class')))
					onclick();
			});
			return x + w;
		}

		function layout() {
			var W = Math.max(600, root.getBoundingClientRect().width);
			var y = 24, x, cv = currentVerdict(), lw = W - 2 * PAD - 16;

			while (head.firstChild)
				head.removeChild(head.firstChild);
			text(head, PAD, y, 'bp-s-title', D.title || 'boundprof');
			y += 18;
			text(head, PAD, y, 'bp-s-meta', metaText());
			(D.pipelines || []).forEach(function (t) {
				y += 16;
				text(head, PAD, y, 'bp-s-pipeline', 'pipeline: ' + t);
			});
			y += 10;
			if (cv) {
				var box = el('rect', { 'class': 'bp-s-box', x: PAD, y: y,
						       width: W - 2 * PAD, rx: 4 }, head);
				var bar = el('rect', { 'class': 'bp-s-bar', x: PAD, y: y, width: 4,
						       rx: 1 }, head);
				var top = y;

				y += 20;
				text(head, PAD + 12, y, 'bp-s-verdict', cv.v['class'] + ', ' +
				     confidenceText(cv.v) + ' \u2014 ' + cv.who);
				var lists = [['EVIDENCE', cv.v.evidence, '\u2022 '],
					     ['LEVERS', cv.v.levers, '']];

				lists.forEach(function (c) {
					if (!c[1] || !c[1].length)
						return;
					y += 18;
					text(head, PAD + 12, y, 'bp-s-head', c[0]);
					c[1].forEach(function (s, n) {
						var prefix = c[2] || (n + 1) + '. ';

						wrap(prefix + s, lw - 12).forEach(function (l, k) {
							y += 16;
							text(head, PAD + 12 + (k ? 14 : 0), y,
							     'bp-s-line', l);
						});
					});
				});
				y += 10;
				box.setAttribute('height', y - top);
				bar.setAttribute('height', y - top);
			}
			/* toolbar */
			y += 8;
			x = PAD;
			if (!DIFF) {
				VIEW_ORDER.forEach(function (m) {
					var cls = m === state.mode ? 'bp-on' :
						  totals[m] > 0 ? '' : 'bp-off';
					var go = function () { setView(m); };

					x = button(head, x, y, viewButtonText(m), cls, go) - 1;
				});
				x += 12;
			}
			x = button(head, x, y, 'Reset zoom', state.zoom ? '' : 'bp-off',
				   resetZoom) + 8;
			x = button(head, x, y,
				   state.query ? 'Search: ' + state.query : 'Search\u2026', '',
				   function () { skin.askSearch(); }) + 8;
			x = button(head, x, y, (state.regex ? '\u2611' : '\u2610') + ' regex', '',
				   function () { search(state.query, !state.regex); }) + 8;
			if (state.query)
				x = button(head, x, y, 'Clear', '',
					   function () { skin.clearSearch(); }) + 8;
			text(head, x + 4, y + 15.5, 'bp-s-matched', matchedText());
			y += 34;
			/* legend */
			x = PAD;
			legendItems().forEach(function (it) {
				var sw = [it.fill, it.fill2].filter(Boolean);
				var w = sw.length * 13 + 5 + it.text.length * sansW + 14;

				if (x + w > W - PAD) {
					x = PAD;
					y += 18;
				}
				sw.forEach(function (f, k) {
					el('rect', { x: x + 13 * k, y: y - 10, width: 12,
						     height: 12, fill: f,
						     stroke: 'rgba(0,0,0,0.25)' }, head);
				});
				text(head, x + sw.length * 13 + 4, y, 'bp-s-legend', it.text);
				x += w;
			});
			y += 10;
			chart.setAttribute('transform', 'translate(' + PAD + ',' + y + ')');
			var h = drawChart(chart, W - 2 * PAD);

			y += h + 20;
			wrap(HELP, W - 2 * PAD).forEach(function (l) {
				text(head, PAD, y, 'bp-s-help', l);
				y += 16;
			});
			root.setAttribute('height', y);
			tip.setAttribute('visibility', 'hidden');
			root.appendChild(tip);
		}

		function toSvg(e) {
			var p = root.createSVGPoint();

			p.x = e.clientX;
			p.y = e.clientY;
			return p.matrixTransform(root.getScreenCTM().inverse());
		}

		chart.addEventListener('click', onChartClick);
		chart.addEventListener('mousemove', function (e) {
			var j = frameAt(e.target);

			if (j < 0) {
				tip.setAttribute('visibility', 'hidden');
				return;
			}
			while (tipText.firstChild)
				tipText.removeChild(tipText.firstChild);
			var lines = describe(j), wmax = 0;

			lines.forEach(function (l, n) {
				var ts = el('tspan', { x: 8, dy: n ? 16 : 0 }, tipText);

				ts.textContent = l;
				if (n === 0)
					ts.setAttribute('font-weight', 'bold');
			});
			tipText.setAttribute('y', 16);
			wmax = tipText.getComputedTextLength ? tipText.getBBox().width : 300;
			var w = wmax + 16, h = lines.length * 16 + 8;
			var p = toSvg(e), W = root.getBoundingClientRect().width;
			var x = p.x + 14, y = p.y + 16;

			if (x + w > W - 4)
				x = Math.max(4, p.x - w - 10);
			if (y + h > Number(root.getAttribute('height')) - 4)
				y = Math.max(4, p.y - h - 10);
			tipRect.setAttribute('width', w);
			tipRect.setAttribute('height', h);
			tip.setAttribute('transform', 'translate(' + x + ',' + y + ')');
			tip.setAttribute('visibility', 'visible');
		});
		chart.addEventListener('mouseleave', function () {
			tip.setAttribute('visibility', 'hidden');
		});
		window.addEventListener('resize', function () { render(); });

		var skin = {
			render: layout,
			askSearch: function () {
				var ask = state.regex ? 'Search frames (regular expression):' :
					  'Search frames (text):';
				var q = window.prompt(ask, state.query);

				if (q !== null)
					search(q, state.regex);
			},
			clearSearch: function () {
				search('', state.regex);
			},
			chart: chart
		};
		return skin;
	}

	/* ------------------------------------------------------------ test hooks */

	api.kind = D.kind;
	api.view = function () { return state.mode; };
	api.verdict = function () {
		var cv = currentVerdict();

		return cv ? cv.who : null;
	};
	api.zoom = function () {
		var v = view();

		return { depth: v.depth[state.zoom], name: names[v.name[state.zoom]] };
	};
	/* the process the zoomed frame belongs to, and whether a verdict is known for it */
	api.zoomProcess = function () {
		var v = view(), j = state.zoom;

		while (j > 0 && v.depth[j] > 1)
			j = v.parent[j];
		if (j <= 0)
			return null;
		return { name: names[v.name[j]], verdict: !!procVerdict[names[v.name[j]]] };
	};
	api.matched = matchedText;
	api.total = function () { return view().tot[0]; };
	/* every drawn frame with its box in client pixels */
	api.frames = function () {
		var v = view(), out = [];

		Array.prototype.forEach.call(ui.chart.querySelectorAll('.bp-f'), function (g) {
			var r = g.firstChild.getBoundingClientRect();

			out.push({ i: g.bpI, name: names[v.name[g.bpI]], depth: v.depth[g.bpI],
				   ancestor: /bp-anc/.test(g.getAttribute('class')),
				   fill: g.firstChild.getAttribute('fill'),
				   x: r.left, y: r.top, w: r.width, h: r.height });
		});
		return out;
	};
	api.chartBox = function () {
		var r = ui.chart.getBoundingClientRect();

		return { x: r.left, y: r.top, w: r.width, h: r.height };
	};

	/* ------------------------------------------------------------ start */

	ui = IS_SVG ? svgSkin() : htmlSkin();
	document.addEventListener('keydown', onKey);
	render();
	api.loadMs = performance.now() - t0;
	api.ready = true;
})();
