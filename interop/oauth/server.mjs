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

// Four clients, all confidential with client_secret_basic:
//   jwt      – client_credentials, gets JWT access tokens for the resource asked;
//   opaque   – client_credentials, gets opaque access tokens (introspect them);
//   rs       – no grants; the resource server's own credentials for the
//              introspection endpoint;
//   exchange – RFC 8693 token exchange: a gateway trading the token its
//              caller presented for a JWT access token for an upstream;
//              and client_credentials, for what it asks for itself.
// client_secret_post is accepted too for the first two, as the *_post twins.
const clients = {
	jwt: { client_id: env('OAUTH_CLIENT_ID', 'wymcp-client'), client_secret: env('OAUTH_CLIENT_SECRET', secret()) },
	opaque: { client_id: 'wymcp-opaque-client', client_secret: secret() },
	rs: { client_id: 'wymcp-resource-server', client_secret: secret() },
	exchange: { client_id: 'wymcp-exchange', client_secret: secret() },
};

// Users, for the policy tests (rules over a token's claims): each is a
// client-credentials client of its own whose JWT access tokens carry a
// groups claim (its sub is its client id).
const users = [
	{ client_id: 'wymcp-alice', client_secret: secret(), groups: ['oncall', 'dev'] },
	{ client_id: 'wymcp-bob', client_secret: secret(), groups: ['dev'] },
	{ client_id: 'wymcp-carol', client_secret: secret(), groups: ['contractors'] },
];
const groupsOf = new Map(users.map((u) => [u.client_id, u.groups]));

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

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
		...users.map(({ client_id, client_secret }) => ccClient({ client_id, client_secret }, 'client_secret_basic')),
		{
			...clients.rs,
			grant_types: [],
			response_types: [],
			redirect_uris: [],
			token_endpoint_auth_method: 'client_secret_basic',
		},
		{
			...clients.exchange,
			// Its own client-credentials tokens are the gateway's for the
			// requests no caller makes (listing an upstream's tools).
			grant_types: [TOKEN_EXCHANGE, 'client_credentials'],
			response_types: [],
			redirect_uris: [],
			token_endpoint_auth_method: 'client_secret_basic',
			scope: scopes.join(' '),
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
	ttl: { ClientCredentials: tokenTTL, AccessToken: tokenTTL },
	// The act claim of exchanged tokens (RFC 8693 §4.1), and the groups
	// claim of the users' tokens; no other token has extra claims.
	extraTokenClaims: (_ctx, token) => actOf.get(token)
		?? (groupsOf.has(token.clientId) ? { groups: groupsOf.get(token.clientId) } : undefined),
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

// RFC 8693 token exchange, for the exchange client only. The subject token
// must be an access token this server issued and that is still valid: a JWT
// (header typ at+jwt) whose signature verifies with one of this run's own
// keys, its kid and alg matching, with this issuer and an exp in the future;
// or an opaque token found in the server's store, unexpired and not
// revoked. Anything else is 400 invalid_grant. The issued token is a JWT
// access token like the JWT client's: sub is the subject token's sub (for a
// client-credentials token, its client), aud the resource (or audience)
// asked for, which must be one the server issues tokens for, scope the
// requested scopes this server knows (filtered, as for the other clients),
// client_id the exchange client, and act {sub: the exchange client}, with
// the subject token's own act nested in it when it had one.
const actOf = new WeakMap();

const verifyKeys = new Map(keys.map((k) => {
	const { d, p, q, dp, dq, qi, ...pub } = k;
	return [k.kid, { alg: k.alg, key: crypto.createPublicKey({ key: pub, format: 'jwk' }) }];
}));

function b64json(segment) {
	return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
}

// subjectOf returns the claims of a subject token that must be one of this
// server's access tokens, or throws invalid_grant.
async function subjectOf(value) {
	const refuse = (why) => new errors.InvalidGrant(`subject_token ${why}`);
	const now = Math.floor(Date.now() / 1000);
	const parts = value.split('.');
	if (parts.length === 3) {
		let header;
		let claims;
		try {
			header = b64json(parts[0]);
			claims = b64json(parts[1]);
		} catch {
			throw refuse('is not a JWT');
		}
		const typ = String(header.typ ?? '').toLowerCase();
		if (typ !== 'at+jwt' && typ !== 'application/at+jwt') throw refuse('is not a JWT access token');
		const k = verifyKeys.get(header.kid);
		if (!k || k.alg !== header.alg) throw refuse('is not signed with a key of this server');
		const signature = Buffer.from(parts[2], 'base64url');
		const key = header.alg === 'ES256' ? { key: k.key, dsaEncoding: 'ieee-p1363' } : k.key;
		if (!crypto.verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), key, signature)) {
			throw refuse('signature does not verify');
		}
		if (claims.iss !== issuer) throw refuse('is from another issuer');
		if (typeof claims.exp !== 'number' || claims.exp <= now) throw refuse('has expired');
		if (typeof claims.nbf === 'number' && claims.nbf > now) throw refuse('is not valid yet');
		if (typeof claims.sub !== 'string' || claims.sub === '') throw refuse('has no sub');
		return { sub: claims.sub, act: claims.act };
	}
	const stored = await provider.AccessToken.find(value) ?? await provider.ClientCredentials.find(value);
	if (!stored || stored.isExpired) throw refuse('is not an active token of this server');
	return { sub: stored.accountId ?? stored.clientId, act: stored.extra?.act };
}

async function tokenExchange(ctx) {
	const { params, client } = ctx.oidc;
	if (!params.subject_token) throw new errors.InvalidRequest('missing required parameter \'subject_token\'');
	if (params.subject_token_type !== ACCESS_TOKEN_TYPE) {
		throw new errors.InvalidRequest(`subject_token_type must be ${ACCESS_TOKEN_TYPE}`);
	}
	if (params.requested_token_type !== undefined && params.requested_token_type !== ACCESS_TOKEN_TYPE) {
		throw new errors.InvalidRequest(`requested_token_type must be ${ACCESS_TOKEN_TYPE}`);
	}
	if (params.actor_token !== undefined || params.actor_token_type !== undefined) {
		throw new errors.InvalidRequest('actor_token is not supported');
	}
	const subject = await subjectOf(params.subject_token);

	const { resource, audience } = params;
	if (resource && audience && resource !== audience) {
		throw new errors.InvalidTarget('resource and audience name different audiences; one token has one');
	}
	const aud = resource || audience;
	if (!aud) throw new errors.InvalidTarget('resource or audience is required');
	if (!audienceAllowed(aud)) throw new errors.InvalidTarget(`resource ${aud} is not one this server issues tokens for`);

	const granted = (params.scope ?? '').split(' ').filter((s) => scopes.includes(s));
	const token = new provider.AccessToken({
		accountId: subject.sub,
		client,
		gty: 'token_exchange',
		scope: granted.join(' ') || undefined,
		resourceServer: new provider.ResourceServer(aud, {
			scope: scopes.join(' '),
			audience: aud,
			accessTokenTTL: tokenTTL,
			accessTokenFormat: 'jwt',
			jwt: { sign: { alg: jwtAlg } },
		}),
	});
	actOf.set(token, { act: { sub: client.clientId, ...(subject.act ? { act: subject.act } : {}) } });
	ctx.oidc.entity('AccessToken', token);
	const value = await token.save();
	ctx.body = {
		access_token: value,
		issued_token_type: ACCESS_TOKEN_TYPE,
		token_type: token.tokenType,
		expires_in: token.expiration,
		scope: token.scope || undefined,
	};
}

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
provider.registerGrantType(TOKEN_EXCHANGE, tokenExchange, [
	'subject_token', 'subject_token_type', 'requested_token_type',
	'actor_token', 'actor_token_type', 'resource', 'audience', 'scope',
]);
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
// Why a grant was refused (invalid_grant's description is generic; the
// detail is only logged).
if (!quiet) {
	provider.on('grant.error', (_ctx, err) => console.error(`oauth: grant.error ${err.error}: ${err.error_detail ?? err.error_description}`));
}

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
	exchange_client_id: clients.exchange.client_id,
	exchange_client_secret: clients.exchange.client_secret,
	users,
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
