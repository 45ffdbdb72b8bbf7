// The OpenID Connect provider of the sign-in tests (started by tests/support/oidc_provider.py).
//
// Everything a provider does by the protocol (discovery, authorization with PKCE, token, userinfo,
// JWKS, sessions, logout) is panva's OpenID Certified `oidc-provider` library, pinned in
// package.json. What the library leaves to whoever deploys it lives here: where the clients and
// accounts come from (clients.json, users.json beside this file) and the page that asks for a
// password.
//
// Environment:
//   OIDC_PORT           the port to listen on, on 127.0.0.1 (required)
//   OIDC_ISSUER         the issuer (default http://127.0.0.1:$OIDC_PORT)
//   OIDC_CLIENTS        clients JSON, an array of client metadata (default clients.json here)
//   OIDC_USERS          users JSON, {"name": {"password", "claims"}} (default users.json here)
//   OIDC_REDIRECT_URIS  comma-separated; becomes the redirect_uris of every client
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

import Provider from 'oidc-provider';

const beside = (name) => fileURLToPath(new URL(name, import.meta.url));
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));

const port = Number.parseInt(process.env.OIDC_PORT ?? '', 10);
if (!Number.isInteger(port) || port <= 0) {
  console.error('OIDC_PORT must name the port to listen on');
  process.exit(2);
}
const issuer = process.env.OIDC_ISSUER || `http://127.0.0.1:${port}`;
const clients = readJson(process.env.OIDC_CLIENTS || beside('clients.json'));
const users = readJson(process.env.OIDC_USERS || beside('users.json'));

const redirects = (process.env.OIDC_REDIRECT_URIS ?? '')
  .split(',')
  .map((uri) => uri.trim())
  .filter((uri) => uri !== '');
if (redirects.length > 0) {
  for (const client of clients) client.redirect_uris = [...redirects];
}

// A fresh RS256 signing key for each run: tests read it from the JWKS endpoint.
function signingKeys() {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = privateKey.export({ format: 'jwk' });
  return { keys: [{ ...key, kid: crypto.randomUUID(), alg: 'RS256', use: 'sig' }] };
}

// The clients of the files are ours: they get what they ask for without a consent page.
const ourClients = new Set(clients.map((client) => client.client_id));
const SCOPES = ['openid', 'email', 'profile', 'groups'];
const CLAIMS = ['email', 'email_verified', 'name', 'preferred_username', 'groups'];

const provider = new Provider(issuer, {
  clients,
  jwks: signingKeys(),
  cookies: { keys: [crypto.randomBytes(32).toString('base64url')] },
  scopes: SCOPES,
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'preferred_username'],
    groups: ['groups'], // a scope of our own, carrying the groups the app maps to access
  },
  // Release the scopes' claims (groups above all) in the ID token, not in userinfo only.
  conformIdTokenClaims: false,
  features: {
    devInteractions: { enabled: false }, // the login page below asks for a password instead
    rpInitiatedLogout: { enabled: true },
  },
  pkce: { required: () => false }, // S256 accepted, not demanded
  ttl: { Session: 3600, Interaction: 600, Grant: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
  async findAccount(ctx, sub) {
    const user = Object.hasOwn(users, sub) ? users[sub] : undefined;
    if (user === undefined) return undefined;
    return { accountId: sub, claims: async () => ({ ...user.claims, sub }) };
  },
  async loadExistingGrant(ctx) {
    const { client, session, result } = ctx.oidc;
    const known = result?.consent?.grantId || session.grantIdFor(client.clientId);
    if (known) return ctx.oidc.provider.Grant.find(known);
    if (!ourClients.has(client.clientId)) return undefined;
    const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
    grant.addOIDCScope(SCOPES.join(' '));
    grant.addOIDCClaims(CLAIMS);
    await grant.save();
    return grant;
  },
});
provider.on('server_error', (ctx, error) => console.error('server_error', error));

const escape = (text) =>
  String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

// The button says "Continue": the app under test has a "Sign in" button of its own.
function loginPage(uid, clientId, problem) {
  const alert = problem ? `<p id="error" role="alert">${escape(problem)}</p>\n` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Test identity provider</title></head>
<body><main>
<h1>Test identity provider</h1>
<p>${escape(clientId)} asks who you are.</p>
${alert}<form method="post" action="/interaction/${escape(uid)}/login" autocomplete="off">
<p><label for="username">Username</label> <input id="username" name="username" autofocus></p>
<p><label for="password">Password</label> <input id="password" name="password" type="password"></p>
<p><button type="submit">Continue</button></p>
</form>
</main></body></html>`;
}

function page(res, status, html) {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(html);
}

async function formFields(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > 65536) throw new Error('form too large');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function passwordMatches(user, given) {
  if (user === undefined) return false;
  const want = crypto.createHash('sha256').update(user.password).digest();
  const got = crypto.createHash('sha256').update(given).digest();
  return crypto.timingSafeEqual(want, got);
}

async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { uid, prompt, params } = details;
  const submitted = req.method === 'POST' && new URL(req.url, issuer).pathname.endsWith('/login');
  if (submitted) {
    const form = await formFields(req);
    const username = form.get('username') ?? '';
    const user = Object.hasOwn(users, username) ? users[username] : undefined;
    if (!passwordMatches(user, form.get('password') ?? '')) {
      return page(res, 401, loginPage(uid, params.client_id, 'Wrong username or password.'));
    }
    return provider.interactionFinished(req, res, { login: { accountId: username } }, { mergeWithLastSubmission: false });
  }
  if (prompt.name === 'login') return page(res, 200, loginPage(uid, params.client_id));
  // Consent (a client not in the files): grant what it asks.
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
  if (prompt.details.missingOIDCScope) grant.addOIDCScope(prompt.details.missingOIDCScope.join(' '));
  if (prompt.details.missingOIDCClaims) grant.addOIDCClaims(prompt.details.missingOIDCClaims);
  const grantId = await grant.save();
  const consent = details.grantId ? {} : { grantId };
  return provider.interactionFinished(req, res, { consent }, { mergeWithLastSubmission: true });
}

const library = provider.callback();
const server = http.createServer((req, res) => {
  if (!req.url.startsWith('/interaction/')) return library(req, res);
  interaction(req, res).catch((error) => {
    console.error('interaction failed:', error.message);
    if (!res.headersSent) page(res, 400, `<!doctype html><p id="error">${escape(error.message)}</p>`);
  });
});
server.listen(port, '127.0.0.1', () => console.log(`oidc-provider ${issuer} ready (pid ${process.pid})`));

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
