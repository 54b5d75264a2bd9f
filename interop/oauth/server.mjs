// A throwaway OAuth 2.1 authorization server for wymcp's end-to-end auth
// tests, built on the npm package oidc-provider (pinned in package.json).
// Started by start.sh; see README.md for the environment it reads and the
// JSON line it prints. Everything lives in memory and dies with the process.
//
// stdout carries exactly one line, the JSON description of the running
// server; everything else (oidc-provider's notices, the request log) goes to
// stderr, so a test can read the first stdout line and leave the rest.

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';

// oidc-provider prints its notices with console.info, which would land on
// stdout before the JSON line. Send all console output to stderr.
console.log = console.error;
console.info = console.error;

const { default: Provider, errors } = await import('oidc-provider');

function env(name, fallback) {
	const v = process.env[name];
	return v === undefined || v === '' ? fallback : v;
}

function positiveInt(name, fallback) {
	const v = Number(env(name, String(fallback)));
	if (!Number.isInteger(v) || v < 0) {
		throw new Error(`${name} must be a non-negative integer, got ${process.env[name]}`);
	}
	return v;
}

const host = env('OAUTH_HOST', '127.0.0.1');
const port = positiveInt('OAUTH_PORT', 0);
const tokenTTL = positiveInt('OAUTH_TOKEN_TTL', 3600);
const jwtAlg = env('OAUTH_JWT_ALG', 'RS256');
const scopes = env('OAUTH_SCOPES', 'tools:echo tools:add tools:admin').split(/[\s,]+/).filter(Boolean);
const quiet = env('OAUTH_QUIET', '') === '1';

if (!['127.0.0.1', 'localhost', '::1'].includes(host)) {
	throw new Error(`OAUTH_HOST must be a loopback address, got ${host}`);
}
if (!['RS256', 'ES256'].includes(jwtAlg)) {
	throw new Error(`OAUTH_JWT_ALG must be RS256 or ES256, got ${jwtAlg}`);
}

// Audiences (RFC 8707 resource indicators) the server will issue tokens for.
// OAUTH_AUDIENCES is a comma list of exact URIs; without it any http URI on a
// loopback host with an explicit port is accepted, since the MCP server's port
// is only known once the test has started it.
const audienceList = env('OAUTH_AUDIENCES', '').split(',').map((s) => s.trim()).filter(Boolean);
const loopbackResource = /^http:\/\/(127\.0\.0\.1|localhost|\[::1\]):[0-9]{1,5}(\/[^?#]*)?$/;

function audienceAllowed(resource) {
	if (audienceList.length > 0) return audienceList.includes(resource);
	return loopbackResource.test(resource);
}

// Signing keys are made fresh at every start: one RSA and one P-256 key, both
// published in the JWKS; OAUTH_JWT_ALG picks which one signs access tokens.
const startedAt = Date.now().toString(36);

function signingKey(type, alg) {
	const { privateKey } = type === 'rsa'
		? crypto.generateKeyPairSync('rsa', { modulusLength: 2048 })
		: crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
	return { ...privateKey.export({ format: 'jwk' }), kid: `wymcp-${alg.toLowerCase()}-${startedAt}`, alg, use: 'sig' };
}

const keys = [signingKey('rsa', 'RS256'), signingKey('ec', 'ES256')];

function providerVersion() {
	try {
		const url = new URL('./node_modules/oidc-provider/package.json', import.meta.url);
		return JSON.parse(fs.readFileSync(url, 'utf8')).version;
	} catch {
		return 'unknown';
	}
}

function secret() {
	return crypto.randomBytes(24).toString('base64url');
}

// Three clients, all confidential with client_secret_basic:
//   jwt     – client_credentials, gets JWT access tokens for the resource asked;
//   opaque  – client_credentials, gets opaque access tokens (introspect them);
//   rs      – no grants; the resource server's own credentials for the
//             introspection endpoint.
// client_secret_post is accepted too for the first two, as the *_post twins.
const clients = {
	jwt: { client_id: env('OAUTH_CLIENT_ID', 'wymcp-client'), client_secret: env('OAUTH_CLIENT_SECRET', secret()) },
	opaque: { client_id: 'wymcp-opaque-client', client_secret: secret() },
	rs: { client_id: 'wymcp-resource-server', client_secret: secret() },
};

const ccClient = (c, method) => ({
	...c,
	grant_types: ['client_credentials'],
	response_types: [],
	redirect_uris: [],
	token_endpoint_auth_method: method,
	scope: scopes.join(' '),
});

const opaqueClients = new Set([clients.opaque.client_id, `${clients.opaque.client_id}-post`]);

const configuration = {
	clients: [
		ccClient(clients.jwt, 'client_secret_basic'),
		ccClient({ ...clients.jwt, client_id: `${clients.jwt.client_id}-post` }, 'client_secret_post'),
		ccClient(clients.opaque, 'client_secret_basic'),
		ccClient({ ...clients.opaque, client_id: `${clients.opaque.client_id}-post` }, 'client_secret_post'),
		{
			...clients.rs,
			grant_types: [],
			response_types: [],
			redirect_uris: [],
			token_endpoint_auth_method: 'client_secret_basic',
		},
	],
	jwks: { keys },
	scopes,
	cookies: { keys: [secret()] },
	routes: {
		token: '/oauth2/token',
		introspection: '/oauth2/introspect',
		revocation: '/oauth2/revoke',
		jwks: '/.well-known/jwks.json',
	},
	ttl: { ClientCredentials: tokenTTL },
	features: {
		devInteractions: { enabled: false },
		clientCredentials: { enabled: true },
		revocation: { enabled: true },
		introspection: {
			enabled: true,
			// The resource server may introspect any token; a client only its own.
			// Anyone else gets {"active":false}.
			allowedPolicy: (_ctx, caller, token) =>
				caller.clientId === clients.rs.client_id || caller.clientId === token.clientId,
		},
		resourceIndicators: {
			enabled: true,
			defaultResource: (_ctx, _client, oneOf) => oneOf,
			useGrantedResource: () => false,
			getResourceServerInfo: (_ctx, resource, client) => {
				if (!audienceAllowed(resource)) {
					throw new errors.InvalidTarget(`resource ${resource} is not one this server issues tokens for`);
				}
				const opaque = opaqueClients.has(client.clientId);
				return {
					scope: scopes.join(' '),
					audience: resource,
					accessTokenTTL: tokenTTL,
					accessTokenFormat: opaque ? 'opaque' : 'jwt',
					...(opaque ? {} : { jwt: { sign: { alg: jwtAlg } } }),
				};
			},
		},
	},
};

// Bind first so that port 0 resolves to a real port before the issuer, which
// contains it, is fixed.
const server = http.createServer();
await new Promise((resolve, reject) => {
	server.once('error', reject);
	server.listen(port, host, resolve);
});
const bound = server.address().port;
const hostPart = host === '::1' ? '[::1]' : host;
const issuer = `http://${hostPart}:${bound}`;

const provider = new Provider(issuer, configuration);
const callback = provider.callback();

server.on('request', (req, res) => {
	// RFC 8414 metadata under its own well-known name: the same document as
	// the OpenID discovery one, which oidc-provider serves.
	if (req.url === '/.well-known/oauth-authorization-server') {
		req.url = '/.well-known/openid-configuration';
	}
	if (req.url === '/healthz') {
		res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
		return;
	}
	if (!quiet) {
		const t0 = Date.now();
		res.on('finish', () => {
			console.error(`oauth: ${req.method} ${req.url} ${res.statusCode} ${Date.now() - t0}ms`);
		});
	}
	callback(req, res);
});

provider.on('server_error', (_ctx, err) => console.error('oauth: server_error', err));

const signing = keys.find((k) => k.alg === jwtAlg);
const info = {
	issuer,
	metadata_url: `${issuer}/.well-known/oauth-authorization-server`,
	jwks_uri: `${issuer}${configuration.routes.jwks}`,
	token_endpoint: `${issuer}${configuration.routes.token}`,
	introspection_endpoint: `${issuer}${configuration.routes.introspection}`,
	revocation_endpoint: `${issuer}${configuration.routes.revocation}`,
	client_id: clients.jwt.client_id,
	client_secret: clients.jwt.client_secret,
	opaque_client_id: clients.opaque.client_id,
	opaque_client_secret: clients.opaque.client_secret,
	introspection_client_id: clients.rs.client_id,
	introspection_client_secret: clients.rs.client_secret,
	scopes,
	audiences: audienceList.length > 0 ? audienceList : ['http://127.0.0.1:*', 'http://localhost:*', 'http://[::1]:*'],
	jwt_alg: jwtAlg,
	jwt_kid: signing.kid,
	token_ttl: tokenTTL,
	server: `oidc-provider ${providerVersion()}`,
	node: process.versions.node,
	pid: process.pid,
};
process.stdout.write(`${JSON.stringify(info)}\n`);

function stop() {
	server.close();
	server.closeAllConnections();
	process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
