// Shared by npm_client_v2.mjs and npm_client_v1.mjs: argument parsing, a wire trace of
// every JSON-RPC message the client transport sends or receives, the scenario both
// official TypeScript clients run against examples/everything.py, and the single JSON
// result document printed on stdout.
//
//   node npm_client_vN.mjs '<json config>'
//
// config: {nodeModules, transport: "stdio"|"http", mode, command, args, url, timeoutMs}
// Exit status 0 and {"ok": true, ...} on success; 1 and {"ok": false, "error": ...} otherwise.

import path from 'node:path';
import { pathToFileURL } from 'node:url';

export const SIMPLE_TEXT = 'This is a simple text response for testing.';
export const STATIC_TEXT = 'This is the content of the static text resource.';
export const LEGACY_ELICIT_MESSAGE = 'Please provide your information';

export function readConfig() {
    if (process.argv.length < 3) {
        throw new Error('usage: node npm_client_vN.mjs <json config>');
    }
    return JSON.parse(process.argv[2]);
}

/** Imports a file inside the installed npm prefix by absolute file URL (NODE_PATH does not apply to ESM). */
export async function importFrom(nodeModules, relative) {
    return import(pathToFileURL(path.join(nodeModules, relative)).href);
}

/** Records every message on `transport` (instance-level patches, so the class is untouched). */
export function traceTransport(transport, trace) {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
        trace.push({ dir: 'client->server', message });
        return send(message, options);
    };
    let handler;
    Object.defineProperty(transport, 'onmessage', {
        configurable: true,
        enumerable: true,
        get: () => handler,
        set: fn => {
            handler =
                typeof fn === 'function'
                    ? (message, extra) => {
                          trace.push({ dir: 'server->client', message });
                          return fn(message, extra);
                      }
                    : fn;
        }
    });
}

/** Errors the client reports out of band (onerror), tagged with the phase they arrived in. */
export function recordErrors(client) {
    const state = { phase: 'connect', list: [] };
    client.onerror = error => {
        const stack = String(error?.stack ?? '').split('\n').slice(0, 6).join('\n');
        state.list.push({ phase: state.phase, error: String(error), stack });
    };
    return state;
}

/** The elicitation answers: the MRTR form asks for `name`, the legacy one for username/email. */
export function elicitationAnswer(params, seen) {
    seen.push(params);
    const properties = params?.requestedSchema?.properties ?? {};
    if ('name' in properties) {
        return { action: 'accept', content: { name: 'Alice' } };
    }
    return { action: 'accept', content: { username: 'testuser', email: 'test@example.com' } };
}

function check(condition, what, detail) {
    if (!condition) {
        throw new Error(`${what}: ${JSON.stringify(detail)}`);
    }
}

function texts(result) {
    return (result?.content ?? []).filter(c => c.type === 'text').map(c => c.text);
}

/**
 * The scenario: list tools, call test_simple_text, read test://static-text, get
 * test_prompt_with_arguments, then one input round. `era` picks the round: "modern"
 * calls test_input_required_result_elicitation (an input_required result the client
 * fulfils through its elicitation handler and retries), "legacy" calls test_elicitation
 * (a real server->client elicitation/create request).
 */
export async function runScenario(client, era, seen, timeoutMs) {
    const opts = { timeout: timeoutMs };
    const out = {};

    const tools = await client.listTools(undefined, opts);
    out.tools = tools.tools.map(t => t.name).sort();
    check(out.tools.includes('test_simple_text'), 'tools/list lacks test_simple_text', out.tools);

    const simple = await client.callTool({ name: 'test_simple_text', arguments: {} }, undefined, opts);
    out.simpleText = texts(simple);
    check(out.simpleText[0] === SIMPLE_TEXT, 'test_simple_text', simple);

    const resource = await client.readResource({ uri: 'test://static-text' }, opts);
    out.resourceText = resource.contents.map(c => c.text);
    check(out.resourceText[0] === STATIC_TEXT, 'resources/read test://static-text', resource);

    const prompt = await client.getPrompt(
        { name: 'test_prompt_with_arguments', arguments: { arg1: 'alpha', arg2: 'beta' } },
        opts
    );
    out.promptTexts = prompt.messages.map(m => m.content?.text);
    const joined = out.promptTexts.join('\n');
    check(joined.includes('alpha') && joined.includes('beta'), 'prompts/get arguments', prompt);

    const before = seen.length;
    if (era === 'modern') {
        const r = await client.callTool(
            { name: 'test_input_required_result_elicitation', arguments: {} },
            undefined,
            opts
        );
        out.inputRound = { tool: 'test_input_required_result_elicitation', texts: texts(r), isError: r.isError ?? false };
        check(out.inputRound.texts[0] === 'Hello, Alice!', 'MRTR elicitation result', r);
    } else {
        const r = await client.callTool(
            { name: 'test_elicitation', arguments: { message: LEGACY_ELICIT_MESSAGE } },
            undefined,
            opts
        );
        out.inputRound = { tool: 'test_elicitation', texts: texts(r), isError: r.isError ?? false };
        check((out.inputRound.texts[0] ?? '').startsWith('User response:'), 'legacy elicitation result', r);
    }
    out.inputRound.elicitations = seen.slice(before);
    check(out.inputRound.elicitations.length === 1, 'elicitation handler calls', out.inputRound.elicitations);
    return out;
}

/** The protocolVersion from the initialize response in the trace (legacy era), if any. */
export function initializeVersion(trace) {
    const init = trace.find(e => e.dir === 'client->server' && e.message.method === 'initialize');
    if (!init) return undefined;
    const reply = trace.find(e => e.dir === 'server->client' && e.message.id === init.message.id);
    return reply?.message?.result?.protocolVersion;
}

/** Runs `body`, prints the one JSON document, and exits; a hard deadline bounds everything. */
export async function main(body) {
    const doc = { ok: false };
    const deadline = setTimeout(() => {
        doc.error = 'deadline exceeded';
        process.stdout.write(JSON.stringify(doc) + '\n', () => process.exit(3));
    }, 100_000);
    let code = 0;
    try {
        Object.assign(doc, await body(doc));
        doc.ok = true;
    } catch (error) {
        doc.ok = false;
        doc.error = String(error?.stack ?? error);
        if (error?.code !== undefined) doc.errorCode = error.code;
        if (error?.data !== undefined) doc.errorData = error.data;
        code = 1;
    }
    clearTimeout(deadline);
    process.stdout.write(JSON.stringify(doc) + '\n', () => process.exit(code));
}
