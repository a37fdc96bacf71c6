// locust-ui 2.43.4, the newest published, asks for Stop and Reset with GET (its RTK Query endpoints
// `stop` and `stats/reset` give no method). Locust 2.47.0 accepts those two routes only as POST, which
// is what its own bundled UI sends, and answers GET with 405: with the library alone, the Stop and
// Reset buttons do nothing. Until a locust-ui release matches, these two requests go as POST; every
// other request is left as it is. Remove this file when locust-ui sends POST itself.
const POST_ONLY = /\/(stop|stats\/reset)$/;

const fetchAsIs = window.fetch.bind(window);

window.fetch = (input, init) => {
  if (input instanceof Request && input.method === 'GET' && POST_ONLY.test(new URL(input.url).pathname)) {
    return fetchAsIs(new Request(input, { method: 'POST' }), init);
  }
  return fetchAsIs(input, init);
};
