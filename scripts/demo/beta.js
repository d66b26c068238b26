// Demo worker "beta": number crunching; its hot function is sieveBeta.
//
// Shaped for a steady profile that V8's own profiler can follow
// (docs/crosscheck.md):
// - Nothing after sieveBeta's loop needs type feedback: the result object
//   is made before the loop and only returned after it.  V8 compiles a hot
//   loop on the fly (on-stack replacement, OSR), often in the first call,
//   before the code after the loop ever ran.  That OSR code deoptimized at
//   the first operation there that had no feedback (an object literal, an
//   addition), on every call, and V8 kept entering it: a deopt loop of
//   thousands a second, which V8's profiler counts as samples.
// - sieveBeta runs 25 times per request on a small range, and crossing out
//   multiples is a function of its own, so V8 optimizes both as a whole.
// - sieveBeta's own loop does most of the work (a checksum over every
//   number, in small integers), so it stays well ahead of its helper.
function crossOutMultiples(composite, p, limit) {
  for (let j = p * p; j <= limit; j += p) composite[j] = 1;
}

function sieveBeta(limit) {
  const composite = new Uint8Array(limit + 1);
  const root = Math.floor(Math.sqrt(limit));
  const stats = { count: 0, twins: 0, maxGap: 0, checksum: 0, last: 2 };
  for (let i = 2; i <= limit; i++) {
    stats.checksum = (stats.checksum * 31 + (i % 251) * (i % 241)) % 65521;
    if (composite[i]) continue;
    stats.count++;
    if (i - stats.last === 2) stats.twins++;
    if (i - stats.last > stats.maxGap) stats.maxGap = i - stats.last;
    stats.last = i;
    if (i <= root) crossOutMultiples(composite, i, limit);
  }
  return stats;
}

function formatBeta(stats, limit) {
  const density = stats.count / limit;
  const label = density > 0.1 ? "dense" : density > 0.05 ? "medium" : "sparse";
  return JSON.stringify({ at: "beta", ...stats, label });
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const limit = Number(url.searchParams.get("n")) || 6000;
    let stats;
    for (let round = 0; round < 25; round++) stats = sieveBeta(limit + round);
    return new Response(formatBeta(stats, limit) + "\n");
  },
};
