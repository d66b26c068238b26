// Demo worker "alpha": recursive compute, hot function fibAlpha.
function fibAlpha(n) {
  return n < 2 ? n : fibAlpha(n - 1) + fibAlpha(n - 2);
}

export default {
  async fetch(request) {
    return new Response(`alpha ${fibAlpha(21)}\n`);
  },
};
