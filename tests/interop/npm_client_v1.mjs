// The official v1 TypeScript client (@modelcontextprotocol/sdk 1.x) against
// examples/everything.py. v1 knows only the 2025-era initialize handshake (its newest
// protocol version is 2025-11-25), so it always runs the legacy scenario: the server asks
// for input with a real server->client elicitation/create request, answered by the
// handler registered with setRequestHandler(ElicitRequestSchema, ...).

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

const PACKAGE = '@modelcontextprotocol/sdk';

await main(async doc => {
    const config = readConfig();
    const { Client } = await importFrom(config.nodeModules, `${PACKAGE}/dist/esm/client/index.js`);
    const { StdioClientTransport } = await importFrom(config.nodeModules, `${PACKAGE}/dist/esm/client/stdio.js`);
    const { StreamableHTTPClientTransport } = await importFrom(
        config.nodeModules,
        `${PACKAGE}/dist/esm/client/streamableHttp.js`
    );
    const { ElicitRequestSchema, LATEST_PROTOCOL_VERSION } = await importFrom(config.nodeModules, `${PACKAGE}/dist/esm/types.js`);

    const trace = [];
    const seen = [];
    Object.assign(doc, { sdk: PACKAGE, transport: config.transport, mode: 'legacy', trace });
    doc.clientLatestProtocolVersion = LATEST_PROTOCOL_VERSION;

    const client = new Client({ name: 'mcpgen-interop-v1', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async request => elicitationAnswer(request.params, seen));
    const errors = recordErrors(client);
    doc.clientErrors = errors.list;

    const transport =
        config.transport === 'stdio'
            ? new StdioClientTransport({ command: config.command, args: config.args, stderr: 'inherit' })
            : new StreamableHTTPClientTransport(new URL(config.url));
    traceTransport(transport, trace);

    await client.connect(transport, { timeout: config.timeoutMs });
    // v1 has no getter for the negotiated version on every transport: read it off the wire.
    doc.era = 'legacy';
    doc.protocolVersion = initializeVersion(trace);
    doc.initializeProtocolVersion = doc.protocolVersion;
    doc.server = client.getServerVersion();
    doc.sentInitialize = trace.some(e => e.dir === 'client->server' && e.message.method === 'initialize');
    doc.sentDiscover = trace.some(e => e.dir === 'client->server' && e.message.method === 'server/discover');
    errors.phase = 'scenario';
    try {
        Object.assign(doc, await runScenario(client, 'legacy', seen, config.timeoutMs));
    } finally {
        doc.serverRequests = trace
            .filter(e => e.dir === 'server->client' && e.message.method !== undefined && e.message.id !== undefined)
            .map(e => e.message.method);
        errors.phase = 'close';
        await client.close();
    }
    return doc;
});
