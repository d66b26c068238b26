// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// pprof.js: reads a pprof profile (profile.proto, gzip or raw) in the browser
// and aggregates it into the call tree and the per-function table the page
// shows.  No dependencies; the protobuf decoder covers exactly the fields of
// proto/profile.proto.
//
//   IsoprofPprof.load(Uint8Array) -> Promise<Profile>   (throws Error with a one-line message)
//   IsoprofPprof.aggregate(profile, sampleIndex, keep) -> {root, total, functions, nodes, maxDepth}
'use strict';

(function (global) {
	// A few bytes of gzip must not become all of the tab's memory.
	const MAX_DECOMPRESSED = 1024 * 1024 * 1024;
	const TWO32 = 4294967296;
	const utf8 = new TextDecoder('utf-8');

	class ProtoReader {
		constructor(buf, start, end) {
			this.b = buf;
			this.p = start;
			this.end = end;
		}

		eof() {
			return this.p >= this.end;
		}

		byte() {
			if (this.p >= this.end)
				throw new Error('truncated protobuf at byte ' + this.p);
			return this.b[this.p++];
		}

		// A varint as its low and high 32 bits (both unsigned).
		varint64() {
			let lo = 0, hi = 0, b;
			for (let i = 0; i < 4; i++) {
				b = this.byte();
				lo |= (b & 0x7f) << (7 * i);
				if (b < 0x80)
					return [lo >>> 0, 0];
			}
			b = this.byte();
			lo |= (b & 0x0f) << 28;
			hi = (b & 0x7f) >> 4;
			if (b < 0x80)
				return [lo >>> 0, hi >>> 0];
			for (let i = 0; i < 5; i++) {
				b = this.byte();
				hi |= (b & 0x7f) << (3 + 7 * i);
				if (b < 0x80)
					return [lo >>> 0, hi >>> 0];
			}
			throw new Error('varint longer than 10 bytes at byte ' + this.p);
		}

		// int64 as a Number: exact to 2^53, which covers every count, time and id we show.
		int64() {
			const [lo, hi] = this.varint64();
			if (hi < 0x80000000)
				return hi * TWO32 + lo;
			const nlo = (~lo + 1) >>> 0;
			const nhi = (~hi + (nlo === 0 ? 1 : 0)) >>> 0;
			return -(nhi * TWO32 + nlo);
		}

		uint64() {
			const [lo, hi] = this.varint64();
			return hi * TWO32 + lo;
		}

		hex64() {
			const [lo, hi] = this.varint64();
			if (!hi)
				return '0x' + lo.toString(16);
			return '0x' + hi.toString(16) + lo.toString(16).padStart(8, '0');
		}

		bool() {
			return this.uint64() !== 0;
		}

		// [field, wiretype], or null at the end of the message.
		tag() {
			if (this.eof())
				return null;
			const t = this.uint64();
			const field = Math.floor(t / 8), wt = t % 8;
			if (field === 0)
				throw new Error('field number 0 at byte ' + this.p);
			return [field, wt];
		}

		sub() {
			const len = this.uint64();
			if (len > this.end - this.p)
				throw new Error('length ' + len + ' past the end of the message at byte ' + this.p);
			const r = new ProtoReader(this.b, this.p, this.p + len);
			this.p += len;
			return r;
		}

		string() {
			const r = this.sub();
			return utf8.decode(this.b.subarray(r.p, r.end));
		}

		skip(wt) {
			switch (wt) {
			case 0: this.varint64(); break;
			case 1: this.advance(8); break;
			case 2: this.sub(); break;
			case 5: this.advance(4); break;
			default: throw new Error('unsupported wire type ' + wt + ' at byte ' + this.p);
			}
		}

		advance(n) {
			if (n > this.end - this.p)
				throw new Error('truncated protobuf at byte ' + this.p);
			this.p += n;
		}

		// A repeated integer field, packed or not, appended to out.
		repeated(wt, out, read) {
			if (wt === 2) {
				const r = this.sub();
				while (!r.eof())
					out.push(read.call(r));
			} else if (wt === 0) {
				out.push(read.call(this));
			} else {
				throw new Error('wire type ' + wt + ' for a repeated integer at byte ' + this.p);
			}
		}
	}

	function expectWire(wt, want, what) {
		if (wt !== want)
			throw new Error(what + ': wire type ' + wt + ', want ' + want);
	}

	function decodeMessage(r, fields) {
		const o = {};
		let t;
		while ((t = r.tag())) {
			const f = fields[t[0]];
			if (f)
				f(o, t[1], r);
			else
				r.skip(t[1]);
		}
		return o;
	}

	const intField = (name) => (o, wt, r) => { expectWire(wt, 0, name); o[name] = r.int64(); };
	const uintField = (name) => (o, wt, r) => { expectWire(wt, 0, name); o[name] = r.uint64(); };
	const boolField = (name) => (o, wt, r) => { expectWire(wt, 0, name); o[name] = r.bool(); };

	const VALUE_TYPE = { 1: intField('type'), 2: intField('unit') };
	const LABEL = { 1: intField('key'), 2: intField('str'), 3: intField('num'), 4: intField('numUnit') };
	const SAMPLE = {
		1: (o, wt, r) => r.repeated(wt, o.locationId || (o.locationId = []), r.uint64),
		2: (o, wt, r) => r.repeated(wt, o.value || (o.value = []), r.int64),
		3: (o, wt, r) => { expectWire(wt, 2, 'label'); (o.label || (o.label = [])).push(decodeMessage(r.sub(), LABEL)); },
	};
	const MAPPING = {
		1: uintField('id'),
		2: (o, wt, r) => { expectWire(wt, 0, 'memory_start'); o.start = r.hex64(); },
		3: (o, wt, r) => { expectWire(wt, 0, 'memory_limit'); o.limit = r.hex64(); },
		4: (o, wt, r) => { expectWire(wt, 0, 'file_offset'); r.varint64(); },
		5: intField('filename'),
		6: intField('buildId'),
		7: boolField('hasFunctions'),
	};
	const LINE = { 1: uintField('functionId'), 2: intField('line'), 3: intField('column') };
	const LOCATION = {
		1: uintField('id'),
		2: uintField('mappingId'),
		3: (o, wt, r) => { expectWire(wt, 0, 'address'); o.address = r.hex64(); },
		4: (o, wt, r) => { expectWire(wt, 2, 'line'); (o.line || (o.line = [])).push(decodeMessage(r.sub(), LINE)); },
		5: boolField('isFolded'),
	};
	const FUNCTION = {
		1: uintField('id'), 2: intField('name'), 3: intField('systemName'),
		4: intField('filename'), 5: intField('startLine'),
	};

	function decodeProfile(buf) {
		const p = {
			sampleType: [], sample: [], mapping: [], location: [], function: [],
			stringTable: [], comment: [], timeNanos: 0, durationNanos: 0, period: 0,
			periodType: null, defaultSampleType: 0, docUrl: 0,
		};
		const r = new ProtoReader(buf, 0, buf.length);
		const sub = (wt, what, fields) => { expectWire(wt, 2, what); return decodeMessage(r.sub(), fields); };
		let t;
		while ((t = r.tag())) {
			const [f, wt] = t;
			switch (f) {
			case 1: p.sampleType.push(sub(wt, 'sample_type', VALUE_TYPE)); break;
			case 2: p.sample.push(sub(wt, 'sample', SAMPLE)); break;
			case 3: p.mapping.push(sub(wt, 'mapping', MAPPING)); break;
			case 4: p.location.push(sub(wt, 'location', LOCATION)); break;
			case 5: p.function.push(sub(wt, 'function', FUNCTION)); break;
			case 6: expectWire(wt, 2, 'string_table'); p.stringTable.push(r.string()); break;
			case 9: expectWire(wt, 0, 'time_nanos'); p.timeNanos = r.int64(); break;
			case 10: expectWire(wt, 0, 'duration_nanos'); p.durationNanos = r.int64(); break;
			case 11: p.periodType = sub(wt, 'period_type', VALUE_TYPE); break;
			case 12: expectWire(wt, 0, 'period'); p.period = r.int64(); break;
			case 13: r.repeated(wt, p.comment, r.int64); break;
			case 14: expectWire(wt, 0, 'default_sample_type'); p.defaultSampleType = r.int64(); break;
			case 15: expectWire(wt, 0, 'doc_url'); p.docUrl = r.int64(); break;
			default: r.skip(wt);
			}
		}
		return p;
	}

	// The invariants pprof's reader checks, so the page rejects what go tool pprof rejects.
	function validate(p) {
		const S = p.stringTable;
		if (!S.length || S[0] !== '')
			throw new Error('string_table[0] must be ""');
		const str = (i, what) => {
			const v = i || 0;
			if (v < 0 || v >= S.length || !Number.isInteger(v))
				throw new Error(what + ': string index ' + v + ' out of range (' + S.length + ' strings)');
			return S[v];
		};
		if (!p.sampleType.length)
			throw new Error('no sample types');
		const ids = (list, what) => {
			const m = new Map();
			list.forEach((x) => {
				if (!x.id)
					throw new Error(what + ' with id 0');
				if (m.has(x.id))
					throw new Error('duplicate ' + what + ' id ' + x.id);
				m.set(x.id, x);
			});
			return m;
		};
		const mappings = ids(p.mapping, 'mapping');
		const functions = ids(p.function, 'function');
		const locations = ids(p.location, 'location');
		p.sampleType.forEach((vt, i) => { str(vt.type, 'sample_type ' + i); str(vt.unit, 'sample_type ' + i); });
		if (p.periodType) {
			str(p.periodType.type, 'period_type');
			str(p.periodType.unit, 'period_type');
		}
		p.comment.forEach((c) => str(c, 'comment'));
		str(p.defaultSampleType, 'default_sample_type');
		p.mapping.forEach((m) => { str(m.filename, 'mapping ' + m.id); str(m.buildId, 'mapping ' + m.id); });
		p.function.forEach((f) => {
			str(f.name, 'function ' + f.id);
			str(f.systemName, 'function ' + f.id);
			str(f.filename, 'function ' + f.id);
		});
		p.location.forEach((l) => {
			if (l.mappingId && !mappings.has(l.mappingId))
				throw new Error('location ' + l.id + ': unknown mapping ' + l.mappingId);
			(l.line || []).forEach((ln) => {
				if (ln.functionId && !functions.has(ln.functionId))
					throw new Error('location ' + l.id + ': unknown function ' + ln.functionId);
			});
		});
		const n = p.sampleType.length;
		p.sample.forEach((s, i) => {
			const nv = (s.value || []).length;
			if (nv !== n)
				throw new Error('sample ' + i + ': ' + nv + ' values, ' + n + ' sample types');
			(s.locationId || []).forEach((id) => {
				if (!locations.has(id))
					throw new Error('sample ' + i + ': unknown location ' + id);
			});
			(s.label || []).forEach((lb) => { str(lb.key, 'sample ' + i + ' label'); str(lb.str, 'sample ' + i + ' label'); });
		});
		return { mappings, functions, locations };
	}

	function basename(path) {
		const i = path.lastIndexOf('/');
		return i >= 0 ? path.slice(i + 1) : path;
	}

	// Colour classes; the legend and the SVG writer (user/report/flame_svg.c) use the same rules.
	function kindOf(name, file, mappingFile) {
		if (mappingFile.startsWith('[kernel'))
			return 'kernel';
		if (!mappingFile && /^\(.*\)$/.test(name))
			return 'synthetic';
		if (/^\[(unknown|jit)\]/.test(name) || name === '[unknown]')
			return 'unknown';
		if (/^(Builtins_|Builtin:|BytecodeHandler:|Stub:|Handler:|RegExp:?|v8::|Bytecodes?_)/.test(name))
			return 'v8';
		if (file)
			return 'js';
		return 'native';
	}

	async function gunzip(bytes) {
		if (typeof DecompressionStream === 'undefined')
			throw new Error('this browser cannot decompress gzip (no DecompressionStream)');
		const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
		const reader = stream.getReader();
		const chunks = [];
		let total = 0;
		try {
			for (;;) {
				const { done, value } = await reader.read();
				if (done)
					break;
				total += value.length;
				if (total > MAX_DECOMPRESSED) {
					reader.cancel();
					throw new Error('decompresses to more than 1 GiB');
				}
				chunks.push(value);
			}
		} catch (e) {
			if (/1 GiB/.test(e.message))
				throw e;
			throw new Error('gzip: ' + (e.message || 'corrupt data'));
		}
		const out = new Uint8Array(total);
		let off = 0;
		for (const c of chunks) {
			out.set(c, off);
			off += c.length;
		}
		return out;
	}

	// Profile: the decoded message turned into interned frames and root-first stacks.
	function buildProfile(p, maps) {
		const S = p.stringTable;
		const frames = [];		// {id, name, file, line, system, mapping, kind}
		const frameByKey = new Map();
		const intern = (name, file, line, system, mapping) => {
			const key = name + '\0' + file;
			let id = frameByKey.get(key);
			if (id === undefined) {
				id = frames.length;
				frameByKey.set(key, id);
				frames.push({ id, name, file, line, system, mapping,
					kind: kindOf(name, file, mapping) });
			}
			return id;
		};
		// Each location expands to its lines, innermost (inlined) first.
		const locFrames = new Map();
		for (const l of p.location) {
			const m = l.mappingId ? maps.mappings.get(l.mappingId) : null;
			const mfile = m ? S[m.filename || 0] : '';
			const out = [];
			for (const ln of l.line || []) {
				const f = ln.functionId ? maps.functions.get(ln.functionId) : null;
				let name = f ? S[f.name || 0] : '';
				const sys = f ? S[f.systemName || 0] : '';
				if (!name)
					name = sys;
				if (!name)
					name = mfile ? '[' + basename(mfile) + ']' : '[unknown]';
				const file = f ? S[f.filename || 0] : '';
				out.push(intern(name, file, (f && f.startLine) || ln.line || 0, sys, mfile));
			}
			if (!out.length)
				out.push(intern(mfile ? '[' + basename(mfile) + ']' : '[unknown] ' + (l.address || '0x0'),
					'', 0, '', mfile));
			locFrames.set(l.id, out);
		}
		const stacks = new Array(p.sample.length);
		const values = new Array(p.sample.length);
		const labels = new Array(p.sample.length);
		const labelValues = new Map();	// key -> Map(value -> sample count)
		p.sample.forEach((s, i) => {
			const st = [];
			const ids = s.locationId || [];
			for (let j = ids.length - 1; j >= 0; j--) {
				const fr = locFrames.get(ids[j]);
				for (let k = fr.length - 1; k >= 0; k--)
					st.push(fr[k]);
			}
			stacks[i] = Int32Array.from(st);
			values[i] = s.value;
			let lb = null;
			for (const l of s.label || []) {
				if (!l.str)
					continue;
				const k = S[l.key || 0], v = S[l.str];
				if (!lb)
					lb = {};
				if (!(k in lb))
					lb[k] = v;
				let vm = labelValues.get(k);
				if (!vm)
					labelValues.set(k, (vm = new Map()));
				vm.set(v, (vm.get(v) || 0) + 1);
			}
			labels[i] = lb;
		});
		const sampleTypes = p.sampleType.map((vt) => ({ type: S[vt.type || 0], unit: S[vt.unit || 0] }));
		let defaultIndex = sampleTypes.length - 1;
		if (p.defaultSampleType) {
			const want = S[p.defaultSampleType];
			const i = sampleTypes.findIndex((t) => t.type === want);
			if (i >= 0)
				defaultIndex = i;
		}
		return {
			sampleTypes, defaultIndex,
			periodType: p.periodType ? { type: S[p.periodType.type || 0], unit: S[p.periodType.unit || 0] } : null,
			period: p.period, timeNanos: p.timeNanos, durationNanos: p.durationNanos,
			comments: p.comment.map((c) => S[c]), docUrl: S[p.docUrl || 0] || '',
			mappings: p.mapping.map((m) => ({ file: S[m.filename || 0], buildId: S[m.buildId || 0] })),
			frames, stacks, values, labels, labelValues,
			sampleCount: p.sample.length,
		};
	}

	async function load(bytes) {
		if (!(bytes instanceof Uint8Array))
			bytes = new Uint8Array(bytes);
		if (!bytes.length)
			throw new Error('empty file');
		let raw = bytes;
		if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b)
			raw = await gunzip(bytes);
		let msg;
		try {
			msg = decodeProfile(raw);
		} catch (e) {
			throw new Error('not a pprof profile: ' + e.message);
		}
		const maps = validate(msg);
		return buildProfile(msg, maps);
	}

	// The call tree (root first) and the function table over the samples keep() accepts.
	function aggregate(prof, si, keep) {
		const root = { f: -1, v: 0, s: 0, c: null, p: null, d: 0, kids: new Map() };
		const nf = prof.frames.length;
		const flat = new Float64Array(nf), cum = new Float64Array(nf);
		const stamp = new Int32Array(nf).fill(-1);
		let total = 0, kept = 0, nodes = 1, maxDepth = 0;
		for (let i = 0; i < prof.stacks.length; i++) {
			if (keep && !keep(i))
				continue;
			const v = Math.abs(prof.values[i][si]);
			kept++;
			if (!v)
				continue;
			total += v;
			const st = prof.stacks[i];
			let n = root;
			n.v += v;
			for (let j = 0; j < st.length; j++) {
				const f = st[j];
				let c = n.kids.get(f);
				if (!c) {
					c = { f, v: 0, s: 0, c: null, p: n, d: n.d + 1, kids: new Map() };
					n.kids.set(f, c);
					nodes++;
					if (c.d > maxDepth)
						maxDepth = c.d;
				}
				c.v += v;
				n = c;
				if (stamp[f] !== i) {
					stamp[f] = i;
					cum[f] += v;
				}
			}
			if (st.length) {
				n.s += v;
				flat[st[st.length - 1]] += v;
			} else {
				root.s += v;
			}
		}
		// Hot children first: the widest path reads left to right.
		const stack = [root];
		while (stack.length) {
			const n = stack.pop();
			n.c = Array.from(n.kids.values()).sort((a, b) => b.v - a.v || a.f - b.f);
			n.kids = null;
			for (const c of n.c)
				stack.push(c);
		}
		const functions = [];
		for (let f = 0; f < nf; f++)
			if (cum[f] || flat[f])
				functions.push({ frame: prof.frames[f], flat: flat[f], cum: cum[f] });
		return { root, total, functions, nodes, maxDepth, kept };
	}

	global.IsoprofPprof = { load, aggregate, kindOf, basename };
})(typeof window !== 'undefined' ? window : globalThis);
