// Demo worker "beta": number crunching; its hot function is sieveBeta.
//
// Shaped for a steady profile that V8's own profiler can follow
// (docs/crosscheck.md):
// - sieveBeta runs 25 times per request on a small range, not once on a
//   large one.  V8 then optimizes it as a whole.  A function called rarely
//   with one long loop can run in on-stack-replacement (OSR) code for good,
//   and V8's profiler, started later, does not know that code.
// - Crossing out multiples is a function of its own.  Nested in sieveBeta's
//   loop, the inner loop got OSR code of its own, which V8 left at every
//   exit of that loop: a loop of deoptimizations, thousands a second.
// - sieveBeta's own loop does most of the work (a checksum over every
//   number, in small integers), so it stays well ahead of its helper.
function crossOutMultiples(composite, p, limit) {
  for (let j = p * p; j <= limit; j += p) composite[j] = 1;
}

function sieveBeta(limit) {
  const composite = new Uint8Array(limit + 1);
  const root = Math.floor(Math.sqrt(limit));
  let count = 0, twins = 0, maxGap = 0, last = 2, checksum = 0;
  for (let i = 2; i <= limit; i++) {
    checksum = (checksum * 31 + (i % 251) * (i % 241)) % 65521;
    if (composite[i]) continue;
    count++;
    if (i - last === 2) twins++;
    if (i - last > maxGap) maxGap = i - last;
    last = i;
    if (i <= root) crossOutMultiples(composite, i, limit);
  }
  let squares = 0;
  for (let k = 1; k * k <= limit; k++) {
    if (!composite[k * k]) squares++;
  }
  const density = count / limit;
  const label = density > 0.1 ? "dense" : density > 0.05 ? "medium" : "sparse";
  return { count, twins, maxGap, checksum, squares, label };
}

function formatBeta(stats) {
  return JSON.stringify({ at: "beta", ...stats });
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const limit = Number(url.searchParams.get("n")) || 6000;
    let stats;
    for (let round = 0; round < 25; round++) stats = sieveBeta(limit + round);
    return new Response(formatBeta(stats) + "\n");
  },
};
