// A real OpenID provider (npm oidc-provider) for the end-to-end tests:
//   node oidc_provider.mjs <node_modules> <port> <resource> [<ttl> [<opaque resource>]]
// Dynamic registration, PKCE, resource indicators issuing JWT access tokens for
// <resource> and opaque ones for <opaque resource> (scopes mcp:tools and admin, living
// <ttl> seconds, default 600), refresh tokens, introspection (the resource server
// authenticates as mcp-introspector / introspector-secret; JWTs cannot be
// introspected, opaque tokens can), revocation (RFC 7009; JWTs cannot be revoked,
// opaque and refresh tokens can), the development login and consent pages (scripted
// by the tests). Prints "ready" when listening.
const [modules, port, resource, ttl = '600', opaque] = process.argv.slice(2);
const { default: Provider, errors } = await import(`${modules}/oidc-provider/lib/index.js`);
const formats = { [resource]: 'jwt', ...(opaque ? { [opaque]: 'opaque' } : {}) };

const issuer = `http://127.0.0.1:${port}`;
const provider = new Provider(issuer, {
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        const format = formats[indicator];
        if (!format) throw new errors.InvalidTarget();
        return {
          scope: 'mcp:tools admin',
          audience: indicator,
          accessTokenFormat: format,
          accessTokenTTL: Number(ttl),
        };
      },
    },
  },
  clients: [{
    client_id: 'mcp-introspector',
    client_secret: 'introspector-secret',
    grant_types: [],
    response_types: [],
    redirect_uris: [],
  }],
  scopes: ['openid', 'offline_access', 'mcp:tools', 'admin'],
  pkce: { required: () => true },
  issueRefreshToken: (ctx, client) => client.grantTypeAllowed('refresh_token'),
  findAccount: (ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
});
provider.listen(Number(port), '127.0.0.1', () => console.log('ready'));
