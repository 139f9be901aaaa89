// A real OpenID provider (npm oidc-provider) for the OAuth client's end-to-end test:
//   node oidc_provider.mjs <node_modules> <port> <resource>
// Dynamic registration, PKCE, resource indicators issuing JWT access tokens for
// <resource> (scope mcp:tools), refresh tokens, introspection, the development login
// and consent pages (scripted by the test). Prints "ready" when listening.
const [modules, port, resource] = process.argv.slice(2);
const { default: Provider, errors } = await import(`${modules}/oidc-provider/lib/index.js`);

const issuer = `http://127.0.0.1:${port}`;
const provider = new Provider(issuer, {
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (indicator !== resource) throw new errors.InvalidTarget();
        return { scope: 'mcp:tools', audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: 600 };
      },
    },
  },
  scopes: ['openid', 'offline_access', 'mcp:tools'],
  pkce: { required: () => true },
  issueRefreshToken: (ctx, client) => client.grantTypeAllowed('refresh_token'),
  findAccount: (ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
});
provider.listen(Number(port), '127.0.0.1', () => console.log('ready'));
