// Builds the workflow bundle ahead of time (Docker image build), so a worker starts without webpack:
//   node bin/bundle-workflows.ts <output.js>   then run the worker with WORKFLOW_BUNDLE_PATH=<output.js>
import { bundleWorkflows } from '../stack/bundle-workflows.ts';

const output = process.argv[2];
if (!output) {
  console.error('usage: node bin/bundle-workflows.ts <output.js>');
  process.exit(2);
}
const bytes = await bundleWorkflows({ outFile: output });
console.log(`Wrote the workflow bundle to ${output} (${(bytes / 1024 / 1024).toFixed(1)} MB).`);
