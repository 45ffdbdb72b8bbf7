// The page's scripts' requests to the server. One refused for want of an identity (a token revoked, a
// sign-in ended) answers 401 with `HX-Redirect` to sign in (app/web/access.py `refusal`): the whole page
// goes there, as htmx's own requests do.

/**
 * `fetch`, following a 401's sign-in redirect with the whole page.
 * @param {string} url
 * @param {RequestInit} [init]
 * @returns {Promise<Response>}
 */
export function request(url, init) {
  return fetch(url, init).then((response) => {
    const signIn = response.status === 401 ? response.headers.get("HX-Redirect") : null;
    if (signIn) window.location.assign(signIn);
    return response;
  });
}
