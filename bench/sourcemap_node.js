'use strict';
// Benchmark 12's node side (bench/sourcemaps.sh):
//
//   node bench/sourcemap_node.js positions BUNDLE OUT [SAMPLES]
//     the positions to look up, one "line column name_len" a line (0-based,
//     columns in UTF-16 code units, as V8 counts them): where V8 places each
//     function of BUNDLE (the '(' after `function NAME` or after an anonymous
//     `function`; name_len is NAME's length, 0 when anonymous), then SAMPLES
//     arbitrary characters of the bundle (default: as many as the functions;
//     a fixed seed, so every run looks up the same ones).  Prints
//     "FUNCTIONS NAMED SAMPLES".
//
//   node --expose-gc bench/sourcemap_node.js measure MAP POSITIONS PASSES [DUMP]
//     node's own decoder, require('node:module').SourceMap: the map read,
//     then timed JSON.parse + new SourceMap (wall and CPU), peak RSS growth
//     (process.resourceUsage().maxRSS after - before) and the heap it keeps
//     (heapUsed after a forced gc, after - before), then one untimed pass
//     and PASSES timed passes of findEntry over all positions.  Prints one
//     line: "PARSE_WALL_MS PARSE_CPU_MS RSS_KB HEAP_KB LOOKUP_NS CHECKSUM".
//     DUMP: writes each position's entry as bench/sourcemap_bench.c does,
//     "line col gen_line gen_col orig_line source" (tab-separated; "-" for
//     each field when findEntry gives nothing).
//
//   node bench/sourcemap_node.js compare OURS NODES
//     the two dumps side by side (the sources already cleaned alike).
//     Prints "AGREE COMPARED SAME_SEGMENT NODE_EARLIER_LINE DIFFER", then up
//     to 5 differing positions on stderr.  NODE_EARLIER_LINE: positions
//     before the first segment of their line, which isoprof leaves unmapped
//     and node's findEntry gives the last entry of an earlier line (not a
//     decoding difference; not compared).
const fs = require('node:fs');

function positions(bundle, out, samples) {
	const text = fs.readFileSync(bundle, 'utf8');
	// ECMAScript's line terminators, as V8 counts lines
	const lines = text.split(/\r\n|[\n\r\u2028\u2029]/);
	const re = /(?<![\w$])function\b\s*(?:\*\s*)?([A-Za-z_$][\w$]*)?\s*\(/g;
	const rows = [];
	let named = 0;
	for (let l = 0; l < lines.length; l++) {
		let m;
		re.lastIndex = 0;
		while ((m = re.exec(lines[l])) !== null) {
			const len = m[1] ? m[1].length : 0;
			rows.push(`${l} ${m.index + m[0].length - 1} ${len}`);
			named += len > 0;
		}
	}
	const functions = rows.length;
	const n = samples === undefined ? functions : samples;
	// a fixed LCG: the same arbitrary positions in every run
	let seed = 12345;
	const rand = (k) => {
		seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
		return Math.floor((seed / 4294967296) * k);
	};
	const starts = [];
	let total = 0;
	for (const line of lines) {
		starts.push(total);
		total += line.length;
	}
	for (let i = 0; i < n && total > 0; i++) {
		const at = rand(total);
		let lo = 0, hi = starts.length - 1;
		while (lo < hi) {
			const mid = (lo + hi + 1) >> 1;
			if (starts[mid] <= at)
				lo = mid;
			else
				hi = mid - 1;
		}
		rows.push(`${lo} ${at - starts[lo]} 0`);
	}
	fs.writeFileSync(out, rows.join('\n') + '\n');
	console.log(`${functions} ${named} ${rows.length - functions}`);
}

function readPositions(file) {
	const t = fs.readFileSync(file, 'utf8').split('\n');
	const pos = [];
	for (const row of t) {
		if (!row)
			continue;
		const f = row.split(' ');
		pos.push(+f[0], +f[1]);
	}
	return Int32Array.from(pos);
}

function measure(mapFile, posFile, passes, dump) {
	const { SourceMap } = require('node:module');
	if (typeof gc !== 'function')
		throw new Error('run with --expose-gc');
	const text = fs.readFileSync(mapFile, 'utf8');
	const pos = readPositions(posFile);
	gc();
	const rss0 = process.resourceUsage().maxRSS;
	const heap0 = process.memoryUsage().heapUsed;
	const cpu0 = process.cpuUsage();
	const t0 = process.hrtime.bigint();
	const sm = new SourceMap(JSON.parse(text));
	const t1 = process.hrtime.bigint();
	const cpu = process.cpuUsage(cpu0);
	const rss1 = process.resourceUsage().maxRSS;
	gc();
	const heap1 = process.memoryUsage().heapUsed;

	let sum = 0;
	const pass = () => {
		for (let i = 0; i < pos.length; i += 2) {
			const e = sm.findEntry(pos[i], pos[i + 1]);
			if (e.originalLine !== undefined)
				sum += e.originalLine;
		}
	};
	pass();
	const t2 = process.hrtime.bigint();
	for (let p = 0; p < passes; p++)
		pass();
	const t3 = process.hrtime.bigint();
	const n = (pos.length / 2) * passes;
	console.log([
		(Number(t1 - t0) / 1e6).toFixed(2),
		((cpu.user + cpu.system) / 1e3).toFixed(2),
		rss1 - rss0,
		Math.round((heap1 - heap0) / 1024),
		n ? (Number(t3 - t2) / n).toFixed(1) : 'n/a',
		sum,
	].join(' '));
	if (dump) {
		const rows = [];
		for (let i = 0; i < pos.length; i += 2) {
			const e = sm.findEntry(pos[i], pos[i + 1]);
			if (e.originalSource === undefined)
				rows.push(`${pos[i]}\t${pos[i + 1]}\t-\t-\t-\t-`);
			else
				rows.push(`${pos[i]}\t${pos[i + 1]}\t${e.generatedLine}\t${e.generatedColumn}` +
					  `\t${e.originalLine}\t${e.originalSource}`);
		}
		fs.writeFileSync(dump, rows.join('\n') + '\n');
	}
}

function compare(oursFile, nodesFile) {
	const ours = fs.readFileSync(oursFile, 'utf8').split('\n').filter(Boolean);
	const nodes = fs.readFileSync(nodesFile, 'utf8').split('\n').filter(Boolean);
	if (ours.length !== nodes.length)
		throw new Error(`dumps of ${ours.length} and ${nodes.length} positions`);
	let agree = 0, compared = 0, same = 0, earlier = 0, differ = 0;
	for (let i = 0; i < ours.length; i++) {
		const a = ours[i].split('\t'), b = nodes[i].split('\t');
		if (a[0] !== b[0] || a[1] !== b[1])
			throw new Error(`dumps out of step at ${i}: ${ours[i]} / ${nodes[i]}`);
		if (a[2] === '-' && b[2] !== '-' && +b[2] < +a[0]) {
			earlier++;
			continue;
		}
		compared++;
		if (a[4] === b[4] && a[5] === b[5]) {
			agree++;
			same += a[2] === b[2] && a[3] === b[3];
		} else {
			differ++;
			if (differ <= 5)
				console.error(`differ at ${a[0]}:${a[1]}: isoprof ${a.slice(2).join(' ')};` +
					      ` node ${b.slice(2).join(' ')}`);
		}
	}
	console.log(`${agree} ${compared} ${same} ${earlier} ${differ}`);
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === 'positions')
	positions(args[0], args[1], args[2] === undefined ? undefined : +args[2]);
else if (cmd === 'measure')
	measure(args[0], args[1], +args[2], args[3]);
else if (cmd === 'compare')
	compare(args[0], args[1]);
else {
	console.error('usage: sourcemap_node.js positions|measure|compare ...');
	process.exit(2);
}
