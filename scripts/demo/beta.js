// Demo worker "beta": array and string work, hot function sieveBeta.
function sieveBeta(limit) {
  const composite = new Uint8Array(limit + 1);
  let count = 0;
  for (let i = 2; i <= limit; i++) {
    if (composite[i]) continue;
    count++;
    for (let j = i * i; j <= limit; j += i) composite[j] = 1;
  }
  return count;
}

function formatBeta(count) {
  return JSON.stringify({ primes: count, at: "beta" });
}

export default {
  async fetch(request) {
    return new Response(formatBeta(sieveBeta(150000)) + "\n");
  },
};
