// The official v2 TypeScript client (@modelcontextprotocol/client) against
// examples/everything.py. config.mode picks ClientOptions.versionNegotiation.mode:
//   "legacy"      the plain 2025 initialize handshake (the client's default),
//   "2026-07-28"  { pin: "2026-07-28" }: modern era at exactly that revision, no fallback,
//   "auto"        probe with server/discover, fall back to initialize only on legacy evidence.
// On a modern connection the client fulfils input_required results itself through the
// elicitation/create handler registered below (inputRequired.autoFulfill defaults to true)
// and retries the call with the collected inputResponses.

import {
    elicitationAnswer,
    importFrom,
    initializeVersion,
    main,
    readConfig,
    recordErrors,
    runScenario,
    traceTransport
} from './npm_common.mjs';

const PACKAGE = '@modelcontextprotocol/client';

await main(async doc => {
    const config = readConfig();
    const { Client, StreamableHTTPClientTransport } = await importFrom(config.nodeModules, `${PACKAGE}/dist/index.mjs`);
    const { StdioClientTransport } = await importFrom(config.nodeModules, `${PACKAGE}/dist/stdio.mjs`);

    const mode = config.mode === 'legacy' || config.mode === 'auto' ? config.mode : { pin: config.mode };
    const trace = [];
    const seen = [];
    Object.assign(doc, { sdk: PACKAGE, transport: config.transport, mode: config.mode, trace });

    const client = new Client(
        { name: 'mcpgen-interop-v2', version: '1.0.0' },
        {
            capabilities: { elicitation: { form: {} } },
            versionNegotiation: { mode, probe: { timeoutMs: config.timeoutMs } }
        }
    );
    client.setRequestHandler('elicitation/create', async request => elicitationAnswer(request.params, seen));
    const errors = recordErrors(client);
    doc.clientErrors = errors.list;

    const transport =
        config.transport === 'stdio'
            ? new StdioClientTransport({ command: config.command, args: config.args, stderr: 'inherit' })
            : new StreamableHTTPClientTransport(new URL(config.url));
    traceTransport(transport, trace);

    await client.connect(transport, { timeout: config.timeoutMs });
    doc.era = client.getProtocolEra();
    doc.protocolVersion = client.getNegotiatedProtocolVersion();
    doc.initializeProtocolVersion = initializeVersion(trace);
    doc.server = client.getServerVersion();
    doc.sentInitialize = trace.some(e => e.dir === 'client->server' && e.message.method === 'initialize');
    doc.sentDiscover = trace.some(e => e.dir === 'client->server' && e.message.method === 'server/discover');
    doc.discoverVersions = client.getDiscoverResult()?.supportedVersions;
    errors.phase = 'scenario';
    try {
        Object.assign(doc, await runScenario(client, doc.era, seen, config.timeoutMs));
    } finally {
        doc.serverRequests = trace
            .filter(e => e.dir === 'server->client' && e.message.method !== undefined && e.message.id !== undefined)
            .map(e => e.message.method);
        errors.phase = 'close';
        await client.close();
    }
    return doc;
});
