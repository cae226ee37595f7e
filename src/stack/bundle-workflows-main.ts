// Builds the workflow bundle ahead of time (Docker image build), so a worker starts without webpack:
//   node src/stack/bundle-workflows-main.ts <output.js>   then run the worker with WORKFLOW_BUNDLE_PATH=<output.js>
import fs from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOWS_PATH } from '../worker.ts';
import { WORKFLOW_INTERCEPTOR_MODULES } from '../telemetry/temporal.ts';

const output = process.argv[2];
if (!output) {
  console.error('usage: node src/stack/bundle-workflows-main.ts <output.js>');
  process.exit(2);
}
const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES });
await fs.mkdir(path.dirname(path.resolve(output)), { recursive: true });
await fs.writeFile(output, code);
console.log(`Wrote the workflow bundle to ${output} (${(code.length / 1024 / 1024).toFixed(1)} MB).`);
