// Demo worker "beta": number crunching, hot function sieveBeta.
// sieveBeta also gathers statistics, which keeps it larger than what V8's
// optimizing compiler inlines into its caller: the profile then shows it as
// a frame of its own (inlined functions are folded into their caller).
// Its own function: V8 compiles a hot loop nested in another on its own
// (on-stack replacement) and leaves that code at every exit of the inner
// loop, which can become a loop of deoptimizations.
function crossOutMultiples(composite, p, limit) {
  for (let j = p * p; j <= limit; j += p) composite[j] = 1;
}

function sieveBeta(limit) {
  const composite = new Uint8Array(limit + 1);
  let count = 0, twins = 0, maxGap = 0, last = 2, checksum = 0;
  for (let i = 2; i <= limit; i++) {
    if (composite[i]) continue;
    count++;
    if (i - last === 2) twins++;
    if (i - last > maxGap) maxGap = i - last;
    checksum = (checksum * 31 + i) % 1000000007;
    last = i;
    crossOutMultiples(composite, i, limit);
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
    const limit = Number(url.searchParams.get("n")) || 150000;
    return new Response(formatBeta(sieveBeta(limit)) + "\n");
  },
};
