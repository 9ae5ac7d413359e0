// provider.mjs: a real OpenID Provider / OAuth 2.1 authorization server for the tests, built on
// the npm package oidc-provider (pinned in scripts/node.sh, installed into .cache/oidc-provider).
//
// Run:  node tests/oidc/provider.mjs [CONFIG]     (Node 24 from .cache/node24; see tests/oidc_provider.py)
//   CONFIG is inline JSON (starting with "{") or a path to a JSON file; every key is optional:
//     port                  0 (default: the OS picks one) or a fixed port; always 127.0.0.1
//     name                  shown on the pages ("Test IdP"), tells two instances apart in a browser
//     accounts              {"alice": {"name": ..., "email": ..., "password": ...}, ...}
//                           default: alice and bob, password "password"; sub = the login name
//     clients               static client metadata objects (client_id, client_secret, redirect_uris, ...)
//     consent               "auto" (default: granted without a page) or "page" (Allow / Deny buttons)
//     scopes                extra non-OpenID scopes a client may ask for (e.g. ["repo", "read:user"])
//     resource_scopes       scopes of every resource server (RFC 8707 resource), default ["mcp"]
//     access_token_ttl      seconds, default 3600 (opaque and JWT access tokens alike)
//     refresh_token_ttl     seconds, default 14 days
//     rotate_refresh_tokens true (default: every refresh returns a new refresh token, the old one
//                           dies) or false (never rotate)
//     use_granted_resource  false (default: a token request without `resource` gets an opaque
//                           token for userinfo, as RFC 8707 says) or true
//     modules               the node_modules folder holding oidc-provider (default: the repo's
//                           .cache/oidc-provider/node_modules, or $OIDC_PROVIDER_MODULES)
//
// What it offers: discovery, JWKS, authorization code flow with PKCE S256 required for every
// client, `iss` in authorization responses (RFC 9207), refresh tokens for every client allowed the
// refresh_token grant (no offline_access or prompt=consent needed), revocation (RFC 7009),
// introspection (RFC 7662), userinfo, open dynamic client registration (RFC 7591; dev only), and
// resource indicators (RFC 8707): a token request with `resource=URL` gets a JWT access token
// (RS256) with iss = issuer, sub = the login name, aud = URL, scope = the granted resource scopes.
//
// Pages (stable HTML for httpx and Playwright; no script, no external asset):
//   login    GET /interaction/<uid>: <form id="login-form" method="post" action="/interaction/<uid>/login">
//            with <input name="login">, <input name="password" type="password">, and buttons
//            "Sign in" and "Cancel" (Cancel = access_denied back to the client). Unknown login
//            or wrong password: the form again, status 401, <p role="alert">Unknown login or
//            wrong password.</p>.
//   consent  with consent "page": <form id="consent-form"> with buttons "Allow" and "Deny";
//            with "auto" the browser only sees redirects.
//   errors   <h1>Error</h1><p id="error">invalid_request</p><p id="error-description">...</p>
//
// Prints "READY http://127.0.0.1:PORT" on stdout once listening; everything else goes to stderr.
// Exits 0 on SIGTERM / SIGINT. Makes no network request of its own.

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const log = (...parts) => process.stderr.write(`provider: ${parts.join(' ')}\n`);

function loadConfig(arg) {
  if (!arg) return {};
  const text = arg.trimStart().startsWith('{') ? arg : readFileSync(arg, 'utf8');
  return JSON.parse(text);
}

const config = loadConfig(process.argv[2]);
const here = dirname(fileURLToPath(import.meta.url));
const modules = config.modules || process.env.OIDC_PROVIDER_MODULES
  || resolve(here, '..', '..', '.cache', 'oidc-provider', 'node_modules');
// An ESM import ignores NODE_PATH, so import the package by file path; its own imports (jose,
// koa) then resolve from the same node_modules folder.
const { default: Provider, errors } = await import(
  pathToFileURL(join(modules, 'oidc-provider', 'lib', 'index.js')).href
);

const NAME = String(config.name ?? 'Test IdP');
const DEFAULT_PASSWORD = 'password';
const accounts = new Map(Object.entries(config.accounts ?? {
  alice: { name: 'Alice Example', email: 'alice@example.test' },
  bob: { name: 'Bob Example', email: 'bob@example.test' },
}));
const consentMode = config.consent ?? 'auto';
const resourceScopes = (config.resource_scopes ?? ['mcp']).join(' ');
const accessTokenTTL = Number(config.access_token_ttl ?? 3600);
const refreshTokenTTL = Number(config.refresh_token_ttl ?? 14 * 24 * 3600);
const rotate = config.rotate_refresh_tokens ?? true;
const useGranted = Boolean(config.use_granted_resource ?? false);

function html(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title, body) {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${html(title)} - ${html(NAME)}</title></head>
<body><main>
<p class="provider-name">${html(NAME)}</p>
${body}
</main></body></html>`;
}

function send(res, status, body) {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    // No form-action: the login POST ends in a redirect to the client, wherever that is.
    'content-security-policy': "default-src 'none'",
  });
  res.end(body);
}

function loginPage(uid, loginHint, error) {
  const alert = error ? '<p role="alert" class="error">Unknown login or wrong password.</p>\n' : '';
  return page('Sign in', `<h1>Sign in to ${html(NAME)}</h1>
${alert}<form id="login-form" method="post" action="/interaction/${html(uid)}/login">
<label>Login <input type="text" name="login" autocomplete="username" required value="${html(loginHint ?? '')}"></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required></label>
<button type="submit" name="action" value="login">Sign in</button>
<button type="submit" formaction="/interaction/${html(uid)}/abort" formnovalidate>Cancel</button>
</form>`);
}

function consentPage(uid, clientName, scopes) {
  const items = scopes.map((s) => `<li class="scope">${html(s)}</li>`).join('');
  return page('Authorize', `<h1>Authorize ${html(clientName)}</h1>
<p>${html(clientName)} asks for access to your account.</p>
<ul id="scopes">${items}</ul>
<form id="consent-form" method="post" action="/interaction/${html(uid)}/confirm">
<button type="submit">Allow</button>
<button type="submit" formaction="/interaction/${html(uid)}/abort">Deny</button>
</form>`);
}

async function readForm(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > 64 * 1024) throw new Error('form too large');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

// A grant covering exactly what the prompt says is missing (what the user would approve).
async function grantMissing(provider, details) {
  const { prompt, grantId, session, params } = details;
  const grant = grantId
    ? await provider.Grant.find(grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  const missing = prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  return grant.save();
}

function requestedScopes(details) {
  const missing = details.prompt.details;
  const scopes = [...(missing.missingOIDCScope ?? [])];
  for (const [indicator, list] of Object.entries(missing.missingResourceScopes ?? {})) {
    for (const scope of list) scopes.push(`${scope} (${indicator})`);
  }
  return scopes;
}

// The interaction pages (login, consent); everything else is oidc-provider's own router.
async function interaction(provider, req, res, uid, action) {
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) {
    send(res, 400, page('Error', '<h1>Error</h1><p id="error">invalid_request</p>'));
    return;
  }
  const prompt = details.prompt.name;
  if (action === 'abort') {
    await provider.interactionFinished(req, res, {
      error: 'access_denied', error_description: 'End-User aborted interaction',
    }, { mergeWithLastSubmission: false });
    return;
  }
  if (prompt === 'login') {
    if (action === 'login' && req.method === 'POST') {
      const form = await readForm(req);
      const login = form.get('login') ?? '';
      const account = accounts.get(login);
      if (!account || form.get('password') !== (account.password ?? DEFAULT_PASSWORD)) {
        log(`login refused for ${JSON.stringify(login)}`);
        send(res, 401, loginPage(uid, login, true));
        return;
      }
      await provider.interactionFinished(req, res, { login: { accountId: login } }, {
        mergeWithLastSubmission: false,
      });
      return;
    }
    send(res, 200, loginPage(uid, details.params.login_hint));
    return;
  }
  if (prompt === 'consent') {
    if (consentMode === 'auto' || (action === 'confirm' && req.method === 'POST')) {
      const grantId = await grantMissing(provider, details);
      await provider.interactionFinished(req, res, { consent: { grantId } }, {
        mergeWithLastSubmission: true,
      });
      return;
    }
    const client = await provider.Client.find(details.params.client_id);
    send(res, 200, consentPage(uid, client?.clientName ?? details.params.client_id, requestedScopes(details)));
    return;
  }
  send(res, 501, page('Error', `<h1>Error</h1><p id="error">unsupported prompt ${html(prompt)}</p>`));
}

function makeKeys() {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  return {
    keys: [
      { ...rsa, kid: `rsa-${randomBytes(4).toString('hex')}`, use: 'sig', alg: 'RS256' },
      { ...ec, kid: `ec-${randomBytes(4).toString('hex')}`, use: 'sig', alg: 'ES256' },
    ],
  };
}

function makeProvider(issuer) {
  return new Provider(issuer, {
    jwks: makeKeys(),
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    clients: config.clients ?? [],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'RS256',
    },
    responseTypes: ['code'],
    scopes: ['openid', 'offline_access', 'profile', 'email', ...(config.scopes ?? [])],
    claims: { openid: ['sub'], profile: ['name'], email: ['email', 'email_verified'] },
    async findAccount(_ctx, sub) {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return {
        accountId: sub,
        async claims() {
          return { sub, name: account.name ?? sub, email: account.email ?? `${sub}@example.test`, email_verified: true };
        },
      };
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: () => rotate,
    ttl: {
      AccessToken: accessTokenTTL,
      ClientCredentials: accessTokenTTL,
      RefreshToken: refreshTokenTTL,
      AuthorizationCode: 120,
      IdToken: 3600,
      Interaction: 600,
      Session: 24 * 3600,
      Grant: 14 * 24 * 3600,
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true },
      introspection: { enabled: true },
      userinfo: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        async logoutSource(ctx, form) {
          ctx.body = page('Sign out', `<h1>Sign out of ${html(NAME)}?</h1>${form}
<button type="submit" form="op.logoutForm" value="yes" name="logout">Sign out</button>`);
        },
        async postLogoutSuccessSource(ctx) {
          ctx.body = page('Signed out', '<h1>Signed out</h1>');
        },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: async () => useGranted,
        // Any absolute URL is a resource server here: the MCP server under test chooses its
        // port at test time. Its tokens are JWTs so that JWTIdentity can verify them locally.
        getResourceServerInfo: async (_ctx, resource) => {
          if (!/^https?:\/\//.test(resource)) throw new errors.InvalidTarget();
          return {
            scope: resourceScopes,
            audience: resource,
            accessTokenTTL,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    // The library's default pages load a web font from the internet; these are offline.
    async renderError(ctx, out) {
      ctx.type = 'html';
      ctx.body = page('Error', `<h1>Error</h1>
<p id="error">${html(out.error ?? '')}</p>
<p id="error-description">${html(out.error_description ?? '')}</p>`);
    },
  });
}

let provider;
let callback;
const server = http.createServer((req, res) => {
  const started = Date.now();
  res.on('finish', () => log(`${req.method} ${req.url.split('?')[0]} ${res.statusCode} ${Date.now() - started}ms`));
  const match = /^\/interaction\/([A-Za-z0-9_-]+)(?:\/(login|confirm|abort))?(?:\?|$)/.exec(req.url);
  if (!match) {
    callback(req, res);
    return;
  }
  interaction(provider, req, res, match[1], match[2]).catch((err) => {
    log(`interaction error: ${err?.stack ?? err}`);
    if (!res.headersSent) {
      send(res, err?.statusCode ?? 500, page('Error', `<h1>Error</h1>
<p id="error">${html(err?.error ?? 'server_error')}</p>
<p id="error-description">${html(err?.error_description ?? err?.message ?? '')}</p>`));
    } else {
      res.end();
    }
  });
});

server.listen(Number(config.port ?? 0), '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  provider = makeProvider(issuer);
  for (const event of ['server_error', 'authorization.error', 'grant.error', 'introspection.error',
    'revocation.error', 'registration_create.error', 'userinfo.error']) {
    provider.on(event, (_ctx, err) => log(`${event}: ${err?.error ?? ''} ${err?.error_description ?? err?.message ?? err}`));
  }
  callback = provider.callback();
  process.stdout.write(`READY ${issuer}\n`);
});

function shutdown(signal) {
  log(`${signal}: shutting down`);
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 2000).unref();
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
