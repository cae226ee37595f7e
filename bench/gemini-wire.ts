// The model of bench/turns.ts: a zero-latency Gemini-wire HTTP server (test/support/fake-gemini.ts) that answers
// as the offline model would (its phrasebook, src/model/offline-intents.ts): a turn's text that asks for a tool
// gets that call, a request that ends with tool results gets a short text, anything else a greeting; text is
// streamed in 3 pieces when the client streams. Brigade's worker (@google/genai) and the peer's (@ai-sdk/google)
// both talk to it. It runs in a process of its own, so that its CPU is not counted as the stack's: the bench's
// CPU figures are of the services and the process that holds the client and the workers.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { matchIntent } from '../src/model/offline-intents.ts';
import { endsWithToolResults, lastContent, reply, startFakeGemini } from '../test/support/fake-gemini.ts';
import { builtInCatalog } from '../src/agents/catalog.ts';

export interface GeminiWire {
  baseUrl: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts the server in a child process; resolves once it listens. */
export function startGeminiWire(): Promise<GeminiWire> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve'], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the Gemini-wire server exited with ${code}`)));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      const line = out.split('\n')[0];
      if (!out.includes('\n') || !line) return;
      child.removeAllListeners('exit');
      const exited = new Promise<void>((done) => child.once('exit', () => done()));
      resolve({
        baseUrl: line.trim(),
        pid: child.pid!,
        stop: async () => {
          child.stdin.end();
          child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}

async function serve(): Promise<void> {
  const fake = await startFakeGemini();
  fake.scriptFn((request) => {
    // nothing here needs the log of requests: keep it from growing over a run
    fake.requests.length = 0;
    if (endsWithToolResults(request)) return reply.text('Here is what I found: order status is on file.');
    const text = (lastContent(request)?.parts ?? []).map((part) => part.text ?? '').join('');
    const tools = new Set((request.body.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).map((d) => d.name)));
    const intent = matchIntent(builtInCatalog(), text, tools);
    return intent ? reply.calls({ name: intent.name, args: intent.args }) : reply.text('Hello! How can I help you today?');
  });
  process.stdout.write(`${fake.baseUrl}\n`);
  const stop = () => void fake.close().finally(() => process.exit(0));
  process.stdin.on('end', stop);
  process.stdin.resume();
  process.once('SIGTERM', stop);
}

if (process.argv.includes('--serve')) void serve();
