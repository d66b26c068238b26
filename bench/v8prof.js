// V8's own CPU profiler through a runtime's inspector, for the benchmarks:
// the peer row "V8's profiler at 1 ms" of benchmark 1, without isoprof.
//   node bench/v8prof.js HOST:PORT [INTERVAL_US]
// Lists the targets (GET /json/list), opens a WebSocket to each, sends
// Profiler.enable, Profiler.setSamplingInterval, Profiler.start, then prints
// "armed N" on stdout.  On SIGINT or SIGTERM it sends Profiler.stop and
// Profiler.disable to every target, prints "stopped: <target> <samples>"
// for each on stderr and exits 0.  A bench helper, not product code: the
// WebSocket client is the minimum RFC 6455 needs (client frames masked,
// server frames unmasked, fragmented messages, ping/pong, close).
'use strict';
const http = require('http');
const net = require('net');
const crypto = require('crypto');

const [addr, intervalArg] = process.argv.slice(2);
if (!addr || !/^[^:]+:\d+$/.test(addr)) {
  console.error('usage: node v8prof.js HOST:PORT [INTERVAL_US]');
  process.exit(2);
}
const [host, port] = addr.split(':');
const interval = Number(intervalArg || 1000);

function getJson(path) {
  return new Promise((resolve, reject) => {
    http.get({ host, port: Number(port), path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => {
        try { resolve(JSON.parse(body)); } catch (e) { reject(e); }
      });
    }).on('error', reject);
  });
}

function encodeFrame(opcode, payload) {
  const body = Buffer.from(payload);
  const mask = crypto.randomBytes(4);
  let head;
  if (body.length < 126) {
    head = Buffer.from([0x80 | opcode, 0x80 | body.length]);
  } else if (body.length < 65536) {
    head = Buffer.alloc(4);
    head[0] = 0x80 | opcode; head[1] = 0x80 | 126; head.writeUInt16BE(body.length, 2);
  } else {
    head = Buffer.alloc(10);
    head[0] = 0x80 | opcode; head[1] = 0x80 | 127; head.writeBigUInt64BE(BigInt(body.length), 2);
  }
  for (let i = 0; i < body.length; i++) body[i] ^= mask[i & 3];
  return Buffer.concat([head, mask, body]);
}

class Session {
  constructor(id, path) {
    this.id = id;
    this.path = path;
    this.nextId = 1;
    this.pending = new Map();
    this.buf = Buffer.alloc(0);
    this.parts = [];
  }

  open() {
    return new Promise((resolve, reject) => {
      const key = crypto.randomBytes(16).toString('base64');
      this.sock = net.connect(Number(port), host);
      this.sock.on('error', reject);
      let upgraded = false;
      this.sock.on('connect', () => {
        this.sock.write(`GET ${this.path} HTTP/1.1\r\nHost: ${host}:${port}\r\n` +
          'Upgrade: websocket\r\nConnection: Upgrade\r\n' +
          `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
      });
      this.sock.on('data', (d) => {
        this.buf = Buffer.concat([this.buf, d]);
        if (!upgraded) {
          const end = this.buf.indexOf('\r\n\r\n');
          if (end < 0) return;
          const head = this.buf.subarray(0, end).toString();
          if (!/^HTTP\/1\.1 101/.test(head)) {
            reject(new Error(`${this.id}: no WebSocket upgrade: ${head.split('\r\n')[0]}`));
            return;
          }
          this.buf = this.buf.subarray(end + 4);
          upgraded = true;
          resolve();
        }
        this.parse();
      });
      this.sock.on('close', () => {
        for (const p of this.pending.values()) p.reject(new Error(`${this.id}: closed`));
        this.pending.clear();
      });
    });
  }

  parse() {
    for (;;) {
      if (this.buf.length < 2) return;
      const fin = this.buf[0] & 0x80, opcode = this.buf[0] & 0x0f;
      let len = this.buf[1] & 0x7f, off = 2;
      if (len === 126) {
        if (this.buf.length < 4) return;
        len = this.buf.readUInt16BE(2); off = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) return;
        len = Number(this.buf.readBigUInt64BE(2)); off = 10;
      }
      if (this.buf.length < off + len) return;
      const payload = this.buf.subarray(off, off + len);
      this.buf = this.buf.subarray(off + len);
      if (opcode === 0x9) {
        this.sock.write(encodeFrame(0xa, payload));
      } else if (opcode === 0x8) {
        this.sock.end();
      } else if (opcode === 0x1 || opcode === 0x0) {
        this.parts.push(Buffer.from(payload));
        if (fin) {
          const msg = JSON.parse(Buffer.concat(this.parts).toString('utf8'));
          this.parts = [];
          const p = this.pending.get(msg.id);
          if (p) {
            this.pending.delete(msg.id);
            if (msg.error) p.reject(new Error(`${this.id}: ${JSON.stringify(msg.error)}`));
            else p.resolve(msg.result);
          }
        }
      }
    }
  }

  call(method, params = {}) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.sock.write(encodeFrame(0x1, JSON.stringify({ id, method, params })));
    });
  }

  close() {
    this.sock.end(encodeFrame(0x8, Buffer.from([0x03, 0xe8])));
  }
}

async function main() {
  const targets = await getJson('/json/list');
  const sessions = targets.map((t) => new Session(t.id, new URL(t.webSocketDebuggerUrl).pathname));
  for (const s of sessions) {
    await s.open();
    await s.call('Profiler.enable');
    await s.call('Profiler.setSamplingInterval', { interval });
  }
  for (const s of sessions) await s.call('Profiler.start');
  process.stdout.write(`armed ${sessions.length}\n`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    for (const s of sessions) {
      const r = await s.call('Profiler.stop');
      await s.call('Profiler.disable');
      console.error(`stopped: ${s.id} ${r.profile.samples ? r.profile.samples.length : 0}`);
      s.close();
    }
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  setInterval(() => {}, 1 << 30);
}

main().catch((e) => {
  console.error(`v8prof: ${e.message}`);
  process.exit(1);
});
