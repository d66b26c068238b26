// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// flame.js: the interactive flamegraph, drawn on a canvas (an icicle: root at
// the top).  A canvas keeps 50k-node trees smooth; what it drew is kept as a
// list of rectangles, which serves hit testing, keyboard navigation and the
// test hook frames().
//
//   const fg = new IsoprofFlame(canvas, tooltip, {onZoom, onFocus, describe});
//   fg.setTree(agg, frames)  fg.zoom(node)  fg.reset()  fg.search(re) -> share
'use strict';

(function (global) {
	const ROW = 18;			// CSS pixels per stack level
	const MIN_W = 0.5;		// narrower subtrees are not drawn
	const FONT = '12px ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace';

	// Base hues per kind; a hash of the name varies lightness so neighbours differ.
	const PALETTE = {
		js: [88, 55, 52],
		v8: [36, 85, 58],
		native: [12, 70, 62],
		kernel: [205, 60, 62],
		synthetic: [0, 0, 72],
		unknown: [270, 25, 72],
		root: [220, 10, 82],
	};

	function hash(s) {
		let h = 2166136261;
		for (let i = 0; i < s.length; i++) {
			h ^= s.charCodeAt(i);
			h = Math.imul(h, 16777619);
		}
		return h >>> 0;
	}

	class IsoprofFlame {
		constructor(canvas, tooltip, hooks) {
			this.canvas = canvas;
			this.tooltip = tooltip;
			this.hooks = hooks || {};
			this.ctx = canvas.getContext('2d');
			this.agg = null;
			this.frames = [];
			this.zoomed = null;
			this.focused = null;
			this.hover = null;
			this.matchRe = null;
			this.rects = [];
			this.rows = [];
			this.colors = new Map();
			this.mouse = null;
			canvas.addEventListener('mousemove', (e) => this.onMove(e));
			canvas.addEventListener('mouseleave', () => {
				this.mouse = null;
				this.hideTip();
			});
			canvas.addEventListener('click', (e) => {
				const r = this.hit(e);
				if (r)
					this.zoom(r.node);
			});
			canvas.addEventListener('keydown', (e) => this.onKey(e));
			// Only keyboard focus selects a frame; a mouse click focuses the canvas too.
			canvas.addEventListener('focus', () => {
				if (!this.focused && this.agg && canvas.matches(':focus-visible'))
					this.setFocus(this.zoomed || this.agg.root);
			});
			canvas.addEventListener('blur', () => this.hideTip());
			global.addEventListener('scroll', () => this.hideTip(), { passive: true });
			if (global.ResizeObserver) {
				let lastW = 0;
				new ResizeObserver(() => {
					const w = this.canvas.parentElement.clientWidth;
					if (w !== lastW) {
						lastW = w;
						this.draw();
					}
				}).observe(canvas.parentElement);
			}
		}

		setTree(agg, frames) {
			this.agg = agg;
			this.frames = frames;
			this.zoomed = null;
			this.focused = null;
			this.draw();
		}

		name(node) {
			return node.f < 0 ? 'all' : this.frames[node.f].name;
		}

		kind(node) {
			return node.f < 0 ? 'root' : this.frames[node.f].kind;
		}

		zoom(node) {
			this.zoomed = node && node.p ? node : null;
			this.focused = node;
			this.draw();
			// What is under the pointer changed: keep the tooltip truthful.
			if (this.mouse)
				this.onMove(this.mouse);
			if (this.hooks.onZoom)
				this.hooks.onZoom(this.zoomed);
		}

		reset() {
			this.zoom(null);
		}

		// Highlight frames whose name matches re; returns the matched share of the total.
		search(re) {
			this.matchRe = re;
			this.draw();
			if (!re || !this.agg || !this.agg.total)
				return null;
			// Iterative: recursive JS stacks are deep enough to overflow the call stack.
			let sum = 0;
			const todo = [this.agg.root];
			while (todo.length) {
				const n = todo.pop();
				if (n.f >= 0 && re.test(this.frames[n.f].name))
					sum += n.v;	// nested matches are already inside this one
				else
					for (const c of n.c)
						todo.push(c);
			}
			return sum / this.agg.total;
		}

		color(node, dim) {
			const k = this.kind(node);
			if (this.matchRe && node.f >= 0 && this.matchRe.test(this.frames[node.f].name))
				return '#d63cd0';
			const key = k + (node.f < 0 ? '' : this.frames[node.f].name);
			let c = this.colors.get(key);
			if (!c) {
				const [h, s, l] = PALETTE[k] || PALETTE.native;
				const v = hash(key);
				const hh = h + ((v & 0xff) / 255 - 0.5) * (k === 'synthetic' ? 0 : 16);
				const ll = l + (((v >> 8) & 0xff) / 255 - 0.5) * 12;
				c = 'hsl(' + hh.toFixed(1) + ' ' + s + '% ' + ll.toFixed(1) + '%)';
				this.colors.set(key, c);
			}
			return dim ? c.replace(')', ' / 0.45)') : c;
		}

		// Layout: ancestors of the zoomed node full width, its subtree scaled to the width.
		layout(width) {
			const rects = [];
			const rows = [];
			const put = (node, x, w, dim) => {
				const r = { node, x, y: node.d * ROW, w, h: ROW - 1, dim };
				rects.push(r);
				(rows[node.d] || (rows[node.d] = [])).push(r);
			};
			const root = this.agg.root;
			const top = this.zoomed || root;
			for (let a = top.p; a; a = a.p)
				put(a, 0, width, true);
			if (!top.v)
				return { rects, rows };
			const scale = width / top.v;
			const stack = [[top, 0]];
			while (stack.length) {
				const [n, x] = stack.pop();
				const w = n.v * scale;
				put(n, x, w, false);
				let cx = x;
				for (const c of n.c) {
					const cw = c.v * scale;
					if (cw >= MIN_W)
						stack.push([c, cx]);
					cx += cw;
				}
			}
			for (const row of rows)
				if (row)
					row.sort((a, b) => a.x - b.x);
			return { rects, rows };
		}

		draw() {
			const cv = this.canvas;
			const width = Math.max(100, cv.parentElement.clientWidth);
			const depth = this.agg ? this.agg.maxDepth + 1 : 1;
			const height = depth * ROW + 1;
			const dpr = global.devicePixelRatio || 1;
			cv.style.width = width + 'px';
			cv.style.height = height + 'px';
			cv.width = Math.round(width * dpr);
			cv.height = Math.round(height * dpr);
			const ctx = this.ctx;
			ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
			ctx.clearRect(0, 0, width, height);
			if (!this.agg) {
				this.rects = [];
				this.rows = [];
				return;
			}
			const { rects, rows } = this.layout(width);
			this.rects = rects;
			this.rows = rows;
			ctx.font = FONT;
			ctx.textBaseline = 'middle';
			const charW = ctx.measureText('MMMMMMMMMM').width / 10;
			for (const r of rects) {
				ctx.fillStyle = this.color(r.node, r.dim);
				const w = Math.max(r.w - 1, 0.5);
				ctx.fillRect(r.x, r.y, w, r.h);
				if (r.node === this.focused) {
					ctx.strokeStyle = '#111';
					ctx.lineWidth = 2;
					ctx.strokeRect(r.x + 1, r.y + 1, Math.max(w - 2, 1), r.h - 2);
				}
				const fit = Math.floor((r.w - 6) / charW);
				if (fit < 3)
					continue;
				let label = this.name(r.node);
				if (label.length > fit)
					label = label.slice(0, fit - 1) + '\u2026';
				ctx.fillStyle = r.dim ? '#444' : '#111';
				ctx.fillText(label, r.x + 3, r.y + r.h / 2 + 0.5);
			}
			cv.dataset.zoom = this.zoomed ? this.name(this.zoomed) : '';
			cv.dataset.drawn = String(rects.length);
		}

		hit(e) {
			const b = this.canvas.getBoundingClientRect();
			const x = e.clientX - b.left, y = e.clientY - b.top;
			const row = this.rows[Math.floor(y / ROW)];
			if (!row || y % ROW >= ROW - 1)
				return null;
			let lo = 0, hi = row.length - 1;
			while (lo <= hi) {
				const mid = (lo + hi) >> 1, r = row[mid];
				if (x < r.x)
					hi = mid - 1;
				else if (x >= r.x + Math.max(r.w, 1))
					lo = mid + 1;
				else
					return r;
			}
			return null;
		}

		onMove(e) {
			this.mouse = { clientX: e.clientX, clientY: e.clientY };
			const r = this.hit(e);
			this.canvas.style.cursor = r ? 'pointer' : 'default';
			if (!r) {
				this.hideTip();
				return;
			}
			this.showTip(r.node, e.clientX, e.clientY);
		}

		showTip(node, cx, cy) {
			const t = this.tooltip;
			t.textContent = '';
			const lines = this.hooks.describe ? this.hooks.describe(node) : [this.name(node)];
			lines.forEach((line, i) => {
				const d = document.createElement('div');
				d.textContent = line;
				if (i === 0)
					d.className = 'tip-name';
				t.appendChild(d);
			});
			t.hidden = false;
			const tw = t.offsetWidth, th = t.offsetHeight;
			let x = cx + 14, y = cy + 16;
			if (x + tw > global.innerWidth - 8)
				x = Math.max(8, cx - tw - 14);
			if (y + th > global.innerHeight - 8)
				y = Math.max(8, cy - th - 12);
			t.style.left = x + 'px';
			t.style.top = y + 'px';
			this.hover = node;
		}

		hideTip() {
			this.tooltip.hidden = true;
			this.hover = null;
		}

		rectOf(node) {
			return this.rects.find((r) => r.node === node) || null;
		}

		setFocus(node) {
			this.focused = node;
			this.draw();
			const r = this.rectOf(node);
			if (r) {
				const b = this.canvas.getBoundingClientRect();
				this.showTip(node, b.left + r.x + Math.min(r.w, 200) / 2, b.top + r.y + r.h);
			}
			if (this.hooks.onFocus)
				this.hooks.onFocus(node);
		}

		// Arrows walk the tree (up: caller, down: hottest callee, left/right: siblings).
		onKey(e) {
			if (!this.agg)
				return;
			const n = this.focused || this.zoomed || this.agg.root;
			let next = null;
			switch (e.key) {
			case 'ArrowUp': next = n.p; break;
			case 'ArrowDown': next = n.c.find((c) => this.rectOf(c)) || null; break;
			case 'ArrowLeft':
			case 'ArrowRight': {
				const row = this.rows[n.d] || [];
				const i = row.findIndex((r) => r.node === n);
				const j = i + (e.key === 'ArrowLeft' ? -1 : 1);
				next = i >= 0 && row[j] ? row[j].node : null;
				break;
			}
			case 'Enter':
			case ' ':
				this.zoom(n);
				e.preventDefault();
				return;
			case 'Escape':
				this.reset();
				e.preventDefault();
				return;
			default:
				return;
			}
			e.preventDefault();
			if (next)
				this.setFocus(next);
		}

		// Test and automation hook: drawn frames in viewport CSS pixels.
		drawnFrames() {
			const b = this.canvas.getBoundingClientRect();
			return this.rects.map((r) => ({
				name: this.name(r.node),
				file: r.node.f >= 0 ? this.frames[r.node.f].file : '',
				kind: this.kind(r.node),
				x: b.left + r.x, y: b.top + r.y, w: r.w, h: r.h,
				depth: r.node.d, cum: r.node.v, flat: r.node.s, ancestor: r.dim,
			}));
		}
	}

	IsoprofFlame.PALETTE = PALETTE;
	global.IsoprofFlame = IsoprofFlame;
})(window);
