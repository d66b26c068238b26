// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// app.js: the page.  Served by `isoprof serve` it offers the capture panel
// (targets, POST to the profile API, progress, download); written by
// `isoprof flame` it carries one profile in #isoprof-embed and hides the
// panel; opened from disk it reads whatever pprof file the user gives it.
//
// window.isoprof is the automation hook the browser tests use:
//   loaded (bool), whenLoaded() -> Promise, frames() -> [{name, x, y, w, h, ...}],
//   zoomed() -> name or null, loadBytes(Uint8Array, filename) -> Promise.
'use strict';

(function () {
	const $ = (id) => document.getElementById(id);
	const TOKEN_KEY = 'isoprof.token';
	const ACCOUNT = 'local';	// the daemon serves one host; the path keeps the platform's shape
	const TABLE_ROWS = 1000;

	const state = {
		profile: null,
		bytes: null,		// exactly what was read or received, for Download
		filename: 'profile.pb.gz',
		si: 0,
		agg: null,
		labelFilter: '',
		sortKey: 'flat',
		sortDir: -1,
		capture: null,		// {abort, timer}
	};
	let loadedResolve;
	const loadedPromise = new Promise((r) => { loadedResolve = r; });

	const flame = new IsoprofFlame($('flame'), $('tooltip'), {
		onZoom: (node) => {
			$('flame-status').textContent = node ? 'Zoomed to ' + describeShort(node) +
				' \u2014 click the top frame or press Reset to zoom out' : '';
		},
		onFocus: (node) => { $('flame-status').textContent = describeShort(node); },
		describe: (node) => describe(node),
	});

	/* ---- formatting ---------------------------------------------------- */

	function unitOf() {
		return state.profile ? state.profile.sampleTypes[state.si].unit : '';
	}

	function trimNum(v, digits) {
		return v.toFixed(digits).replace(/\.?0+$/, '');
	}

	function formatValue(v, unit) {
		const a = Math.abs(v);
		unit = (unit || '').toLowerCase();
		if (/^(nanoseconds?|ns)$/.test(unit)) {
			if (a >= 1e9) return trimNum(v / 1e9, 2) + ' s';
			if (a >= 1e6) return trimNum(v / 1e6, 2) + ' ms';
			if (a >= 1e3) return trimNum(v / 1e3, 2) + ' \u00b5s';
			return v + ' ns';
		}
		if (/^(microseconds?|us)$/.test(unit))
			return formatValue(v * 1e3, 'nanoseconds');
		if (/^(milliseconds?|ms)$/.test(unit))
			return formatValue(v * 1e6, 'nanoseconds');
		if (/^(bytes?|b)$/.test(unit)) {
			const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
			let x = v, i = 0;
			while (Math.abs(x) >= 1024 && i < u.length - 1) {
				x /= 1024;
				i++;
			}
			return (i ? trimNum(x, 2) : String(x)) + ' ' + u[i];
		}
		return v.toLocaleString('en-US') + (unit && unit !== 'count' ? ' ' + unit : '');
	}

	function pct(v, total) {
		if (!total)
			return '0%';
		const p = (v / total) * 100;
		return (p >= 10 ? p.toFixed(1) : p.toFixed(2)) + '%';
	}

	function fileLine(fr) {
		if (!fr.file)
			return fr.mapping ? IsoprofPprof.basename(fr.mapping) : '';
		return fr.line ? fr.file + ':' + fr.line : fr.file;
	}

	function describe(node) {
		const total = state.agg.total, unit = unitOf();
		const fr = node.f >= 0 ? state.profile.frames[node.f] : null;
		const lines = [fr ? fr.name : 'all'];
		if (fr && fileLine(fr))
			lines.push(fileLine(fr));
		lines.push('flat: ' + formatValue(node.s, unit) + ' (' + pct(node.s, total) + ')');
		lines.push('cum: ' + formatValue(node.v, unit) + ' (' + pct(node.v, total) + ')');
		lines.push('share of total: ' + pct(node.v, total) + (fr ? ' \u00b7 ' + fr.kind : ''));
		return lines;
	}

	function describeShort(node) {
		const d = describe(node);
		return d[0] + ' \u2014 ' + d.slice(1).join(', ');
	}

	function setStatus(el, text, isErr) {
		el.textContent = text;
		el.classList.toggle('err', !!isErr);
	}

	/* ---- loading ------------------------------------------------------- */

	async function loadBytes(bytes, filename, opts) {
		document.body.dataset.state = 'loading';
		$('load-error').hidden = true;
		let prof;
		try {
			prof = await IsoprofPprof.load(bytes);
		} catch (e) {
			document.body.dataset.state = state.profile ? 'ready' : 'error';
			const err = $('load-error');
			err.textContent = (filename ? filename + ': ' : '') + e.message;
			err.hidden = false;
			throw e;
		}
		state.profile = prof;
		state.bytes = bytes;
		state.filename = filename || 'profile.pb.gz';
		state.si = prof.defaultIndex;
		if (opts && Number.isInteger(opts.sampleIndex) && opts.sampleIndex >= 0 &&
		    opts.sampleIndex < prof.sampleTypes.length)
			state.si = opts.sampleIndex;
		state.labelFilter = '';
		$('download').disabled = false;
		$('empty').hidden = true;
		$('profile').hidden = false;
		fillSampleTypes();
		fillLabelFilter();
		recompute();
		document.body.dataset.state = 'ready';
		api.loaded = true;
		loadedResolve();
		return prof;
	}

	function fillSampleTypes() {
		const sel = $('sample-type');
		sel.textContent = '';
		state.profile.sampleTypes.forEach((t, i) => {
			const o = new Option(t.type + ' (' + t.unit + ')', String(i));
			sel.appendChild(o);
		});
		sel.value = String(state.si);
		sel.disabled = state.profile.sampleTypes.length < 2;
	}

	function fillLabelFilter() {
		const sel = $('label-filter');
		sel.textContent = '';
		sel.appendChild(new Option('all', ''));
		for (const key of ['class', 'thread', 'script', 'version', 'isolate']) {
			const vals = state.profile.labelValues.get(key);
			if (!vals || vals.size < 1)
				continue;
			const g = document.createElement('optgroup');
			g.label = key;
			Array.from(vals.entries()).sort((a, b) => b[1] - a[1]).forEach(([v, n]) => {
				g.appendChild(new Option(key + ' = ' + v + ' (' + n + ' samples)', key + '\0' + v));
			});
			sel.appendChild(g);
		}
		sel.disabled = sel.options.length < 2;
	}

	function recompute() {
		const prof = state.profile;
		let keep = null;
		if (state.labelFilter) {
			const [k, v] = state.labelFilter.split('\0');
			keep = (i) => !!prof.labels[i] && prof.labels[i][k] === v;
		}
		state.agg = IsoprofPprof.aggregate(prof, state.si, keep);
		renderInfo();
		flame.setTree(state.agg, prof.frames);
		$('flame-status').textContent = '';
		applySearch();
		renderTable();
	}

	function renderInfo() {
		const prof = state.profile, dl = $('profile-info');
		dl.textContent = '';
		const add = (k, v) => {
			const d = document.createElement('div');
			const dt = document.createElement('dt');
			const dd = document.createElement('dd');
			dt.textContent = k;
			dd.textContent = v;
			d.append(dt, dd);
			dl.appendChild(d);
		};
		add('Sample types', prof.sampleTypes.map((t) => t.type + '/' + t.unit).join(', '));
		if (prof.periodType)
			add('Period', formatValue(prof.period, prof.periodType.unit) + ' of ' + prof.periodType.type);
		if (prof.timeNanos)
			add('Time', new Date(prof.timeNanos / 1e6).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC'));
		if (prof.durationNanos)
			add('Duration', formatValue(prof.durationNanos, 'nanoseconds'));
		add('Samples', state.agg.kept === prof.sampleCount ? prof.sampleCount.toLocaleString('en-US') :
			state.agg.kept.toLocaleString('en-US') + ' of ' + prof.sampleCount.toLocaleString('en-US'));
		add('Total', formatValue(state.agg.total, unitOf()));
		add('Nodes', state.agg.nodes.toLocaleString('en-US'));
		$('comments').textContent = prof.comments.join('\n');
		$('comments-box').hidden = !prof.comments.length;
	}

	/* ---- search -------------------------------------------------------- */

	function patternOf(text) {
		if (!text)
			return null;
		try {
			return new RegExp(text, 'i');
		} catch (e) {
			return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
		}
	}

	function applySearch() {
		const re = patternOf($('search').value);
		const share = flame.search(re);
		$('search-result').textContent = re ? 'matches: ' + ((share || 0) * 100).toFixed(2) + '% of total' : '';
	}

	/* ---- table --------------------------------------------------------- */

	function renderTable() {
		const total = state.agg.total, unit = unitOf();
		const re = patternOf($('table-filter').value);
		let rows = state.agg.functions;
		if (re)
			rows = rows.filter((r) => re.test(r.frame.name));
		const k = state.sortKey, dir = state.sortDir;
		rows = rows.slice().sort((a, b) => {
			let c;
			if (k === 'name')
				c = a.frame.name < b.frame.name ? -1 : a.frame.name > b.frame.name ? 1 : 0;
			else
				c = a[k] - b[k];
			if (c)
				return dir * c;
			// pprof's tie-breaks: the other value, then the name
			const other = k === 'cum' ? 'flat' : 'cum';
			return (b[other] - a[other]) || (a.frame.name < b.frame.name ? -1 : 1);
		});
		const tbody = document.querySelector('#functions tbody');
		const frag = document.createDocumentFragment();
		for (const r of rows.slice(0, TABLE_ROWS)) {
			const tr = document.createElement('tr');
			tr.tabIndex = 0;
			tr.dataset.name = r.frame.name;
			const cells = [
				[formatValue(r.flat, unit), 'num'], [pct(r.flat, total), 'num'],
				[formatValue(r.cum, unit), 'num'], [pct(r.cum, total), 'num'],
				[r.frame.name, 'fn k-' + r.frame.kind], [fileLine(r.frame), 'file'],
			];
			for (const [text, cls] of cells) {
				const td = document.createElement('td');
				td.textContent = text;
				td.className = cls;
				if (cls.startsWith('fn'))
					td.title = r.frame.system && r.frame.system !== r.frame.name ? r.frame.system : r.frame.name;
				tr.appendChild(td);
			}
			frag.appendChild(tr);
		}
		tbody.textContent = '';
		tbody.appendChild(frag);
		$('table-count').textContent = rows.length > TABLE_ROWS ?
			'showing ' + TABLE_ROWS + ' of ' + rows.length + ' functions' : rows.length + ' functions';
		document.querySelectorAll('#functions th button').forEach((b) => {
			b.parentElement.setAttribute('aria-sort', b.dataset.key !== k ? 'none' :
				dir < 0 ? 'descending' : 'ascending');
		});
	}

	// A row focuses its function: search for it and zoom to its widest frame.
	function focusFunction(name) {
		const esc = '^' + name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '$';
		$('search').value = esc;
		applySearch();
		let best = null;
		const todo = [state.agg.root];
		while (todo.length) {
			const n = todo.pop();
			if (n.f >= 0 && state.profile.frames[n.f].name === name) {
				if (!best || n.v > best.v)
					best = n;
			} else {
				for (const c of n.c)
					todo.push(c);
			}
		}
		if (best)
			flame.zoom(best);
		$('flame').scrollIntoView({ block: 'nearest', behavior: 'smooth' });
	}

	/* ---- capture (daemon) ---------------------------------------------- */

	function authHeaders() {
		const t = $('token').value.trim();
		return t ? { Authorization: 'Bearer ' + t } : {};
	}

	async function errorText(res) {
		let msg = 'HTTP ' + res.status + (res.statusText ? ' ' + res.statusText : '');
		try {
			const env = await res.json();
			if (env && Array.isArray(env.errors) && env.errors.length)
				msg = env.errors.map((e) => (e.code ? e.code + ': ' : '') + e.message).join('; ') +
					' (HTTP ' + res.status + ')';
		} catch (e) { /* not the JSON envelope: keep the status line */ }
		const ra = res.headers.get('Retry-After');
		if (res.status === 429 && ra)
			msg += ' \u2014 retry after ' + ra + ' s';
		if (res.status === 401 || res.status === 403)
			msg += ' \u2014 enter the daemon\'s bearer token under "Durable Object, access token"';
		return msg;
	}

	async function loadTargets() {
		const sel = $('target');
		const status = $('capture-status');
		const prev = sel.value;
		let list;
		try {
			const res = await fetch('v1/targets', { headers: authHeaders(), cache: 'no-store' });
			if (!res.ok) {
				setStatus(status, 'Targets: ' + await errorText(res), true);
				if (res.status === 401 || res.status === 403)
					$('more-options').open = true;
				return;
			}
			list = await res.json();
		} catch (e) {
			setStatus(status, 'Targets: ' + e.message, true);
			return;
		}
		sel.textContent = '';
		const seen = new Set();
		for (const proc of Array.isArray(list) ? list : []) {
			const runtime = (proc.runtime || '?') + (proc.version ? ' ' + proc.version : '');
			for (const log of proc.code_logs || []) {
				if (!log.name)
					continue;
				const version = log.label || log.version || 'latest';
				const o = new Option(log.name + ' @ ' + version + ' \u2014 isolate ' + log.isolate +
					', pid ' + proc.pid + ', ' + runtime, JSON.stringify({
					script: log.name, version, pid: proc.pid, isolate: log.isolate, runtime,
					created: log.created || '',
				}));
				sel.appendChild(o);
				seen.add(log.name);
			}
		}
		// "latest" follows redeployments (§5): one entry per script.
		for (const name of seen) {
			sel.appendChild(new Option(name + ' @ latest', JSON.stringify({ script: name, version: 'latest' })));
		}
		if (!sel.options.length) {
			sel.appendChild(new Option('no V8 isolates with a known script on this host', ''));
			setStatus(status, 'No targets: start a runtime with --perf-basic-prof and the code log flags (docs/v8-frames.md).', false);
		} else if (status.classList.contains('err')) {
			setStatus(status, '', false);
		}
		if (Array.from(sel.options).some((o) => o.value === prev))
			sel.value = prev;
		showTargetInfo();
	}

	function showTargetInfo() {
		const v = $('target').value;
		let t = null;
		try { t = v ? JSON.parse(v) : null; } catch (e) { t = null; }
		$('target-info').textContent = !t ? '' : t.pid ?
			'pid ' + t.pid + ' \u00b7 ' + t.runtime + ' \u00b7 isolate ' + t.isolate +
			(t.created ? ' \u00b7 created ' + t.created : '') :
			'the most recently created isolate of ' + t.script + ' that has executed';
		$('start').disabled = !t || !!state.capture;
	}

	async function startCapture() {
		const status = $('capture-status');
		let t;
		try { t = JSON.parse($('target').value); } catch (e) { t = null; }
		if (!t) {
			setStatus(status, 'Choose a target first.', true);
			return;
		}
		const secs = Number($('duration').value);
		if (!(secs >= 1 && secs <= 50)) {
			setStatus(status, 'Duration must be between 1 and 50 seconds.', true);
			$('duration').focus();
			return;
		}
		const durationMs = Math.round(secs * 1000);
		const type = $('profile-type').value;
		const body = { duration_ms: durationMs, profile_type: type };
		const ns = $('namespace-id').value.trim(), actor = $('actor-id').value.trim();
		if (ns || actor) {
			body.namespace_id = ns;
			body.actor_id = actor;
		}
		const url = 'accounts/' + encodeURIComponent(ACCOUNT) + '/workers/workers/' +
			encodeURIComponent(t.script) + '/versions/' + encodeURIComponent(t.version) + '/profile';
		const abort = new AbortController();
		const started = performance.now();
		const progress = $('progress');
		progress.value = 0;
		const timer = setInterval(() => {
			const f = Math.min(1, (performance.now() - started) / durationMs);
			progress.value = Math.round(f * 1000);
			setStatus(status, f < 1 ? 'Capturing ' + t.script + ' (' + type + ')\u2026 ' +
				Math.ceil((durationMs - (performance.now() - started)) / 1000) + ' s left' :
				'Capture done, waiting for the profile\u2026', false);
		}, 100);
		state.capture = { abort, timer };
		$('start').disabled = true;
		$('cancel').hidden = false;
		document.body.dataset.capture = 'running';
		try {
			const res = await fetch(url, {
				method: 'POST', signal: abort.signal, cache: 'no-store',
				headers: Object.assign({ 'Content-Type': 'application/json' }, authHeaders()),
				body: JSON.stringify(body),
			});
			if (!res.ok) {
				setStatus(status, await errorText(res), true);
				document.body.dataset.capture = 'error';
				return;
			}
			const bytes = new Uint8Array(await res.arrayBuffer());
			const name = [IsoprofPprof.basename(t.script), t.version, type].join('-')
				.replace(/[^\w.@-]+/g, '_') + '.pb.gz';
			progress.value = 1000;
			await loadBytes(bytes, name);
			setStatus(status, 'Profile received: ' + bytes.length.toLocaleString('en-US') + ' bytes, ' +
				state.profile.sampleCount + ' samples.', false);
			document.body.dataset.capture = 'done';
		} catch (e) {
			setStatus(status, e.name === 'AbortError' ? 'Cancelled.' : 'Capture failed: ' + e.message, true);
			document.body.dataset.capture = 'error';
		} finally {
			clearInterval(timer);
			state.capture = null;
			$('cancel').hidden = true;
			showTargetInfo();
		}
	}

	/* ---- download, file open, drag and drop ---------------------------- */

	function download() {
		if (!state.bytes)
			return;
		const url = URL.createObjectURL(new Blob([state.bytes], { type: 'application/octet-stream' }));
		const a = document.createElement('a');
		a.href = url;
		a.download = state.filename;
		document.body.appendChild(a);
		a.click();
		a.remove();
		setTimeout(() => URL.revokeObjectURL(url), 10000);
	}

	async function openFile(file) {
		if (!file)
			return;
		const bytes = new Uint8Array(await file.arrayBuffer());
		try {
			await loadBytes(bytes, file.name);
		} catch (e) { /* shown in #load-error */ }
	}

	function wireDrop() {
		let depth = 0;
		const overlay = $('drop-overlay');
		const hasFiles = (e) => e.dataTransfer && Array.from(e.dataTransfer.types).includes('Files');
		window.addEventListener('dragenter', (e) => {
			if (!hasFiles(e))
				return;
			depth++;
			overlay.hidden = false;
			e.preventDefault();
		});
		window.addEventListener('dragover', (e) => { if (hasFiles(e)) e.preventDefault(); });
		window.addEventListener('dragleave', () => {
			if (--depth <= 0) {
				depth = 0;
				overlay.hidden = true;
			}
		});
		window.addEventListener('drop', (e) => {
			depth = 0;
			overlay.hidden = true;
			if (!hasFiles(e))
				return;
			e.preventDefault();
			openFile(e.dataTransfer.files[0]);
		});
	}

	/* ---- start --------------------------------------------------------- */

	function debounce(fn, ms) {
		let t = 0;
		return () => {
			clearTimeout(t);
			t = setTimeout(fn, ms);
		};
	}

	function base64ToBytes(b64) {
		const bin = atob(b64);
		const out = new Uint8Array(bin.length);
		for (let i = 0; i < bin.length; i++)
			out[i] = bin.charCodeAt(i);
		return out;
	}

	const api = {
		loaded: false,
		whenLoaded: () => loadedPromise,
		frames: () => flame.drawnFrames(),
		zoomed: () => (flame.zoomed ? flame.name(flame.zoomed) : null),
		loadBytes,
		formatValue,
	};
	window.isoprof = api;

	$('file').addEventListener('change', (e) => openFile(e.target.files[0]));
	$('download').addEventListener('click', download);
	$('reset').addEventListener('click', () => flame.reset());
	$('search').addEventListener('input', debounce(applySearch, 120));
	$('table-filter').addEventListener('input', debounce(renderTable, 120));
	$('sample-type').addEventListener('change', (e) => {
		state.si = Number(e.target.value);
		recompute();
	});
	$('label-filter').addEventListener('change', (e) => {
		state.labelFilter = e.target.value;
		recompute();
	});
	document.querySelectorAll('#functions th button').forEach((b) => {
		b.addEventListener('click', () => {
			const k = b.dataset.key;
			if (state.sortKey === k)
				state.sortDir = -state.sortDir;
			else
				state.sortDir = k === 'name' ? 1 : -1;
			state.sortKey = k;
			renderTable();
		});
	});
	const tbody = document.querySelector('#functions tbody');
	tbody.addEventListener('click', (e) => {
		const tr = e.target.closest('tr');
		if (tr)
			focusFunction(tr.dataset.name);
	});
	tbody.addEventListener('keydown', (e) => {
		const tr = e.target.closest('tr');
		if (tr && (e.key === 'Enter' || e.key === ' ')) {
			e.preventDefault();
			focusFunction(tr.dataset.name);
		}
	});
	wireDrop();

	const embed = $('isoprof-embed');
	if (embed) {
		// Written by `isoprof flame`: one profile, no daemon behind the page.
		document.body.classList.add('standalone');
		let cfg = {};
		try {
			cfg = JSON.parse(embed.textContent);
		} catch (e) {
			$('load-error').textContent = 'embedded profile: ' + e.message;
			$('load-error').hidden = false;
		}
		if (cfg.title) {
			document.title = cfg.title + ' \u2014 isoprof';
			$('title').textContent = cfg.title;
		}
		if (cfg.profile) {
			loadBytes(base64ToBytes(cfg.profile), cfg.filename,
				{ sampleIndex: cfg.sample_index }).catch(() => {});
		}
	} else if (location.protocol === 'http:' || location.protocol === 'https:') {
		document.body.classList.add('capture');
		$('capture').hidden = false;
		const saved = sessionStorage.getItem(TOKEN_KEY);
		if (saved)
			$('token').value = saved;
		$('token').addEventListener('change', () => {
			const v = $('token').value.trim();
			if (v)
				sessionStorage.setItem(TOKEN_KEY, v);
			else
				sessionStorage.removeItem(TOKEN_KEY);
			loadTargets();
		});
		$('target').addEventListener('change', showTargetInfo);
		$('targets-refresh').addEventListener('click', loadTargets);
		$('start').addEventListener('click', startCapture);
		$('cancel').addEventListener('click', () => { if (state.capture) state.capture.abort.abort(); });
		loadTargets();
	}
})();
