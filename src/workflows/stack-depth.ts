// Preloaded into the workflow sandbox before the SDK freezes its globals (stack/bundle-workflows.ts,
// preloadModules). The SDK's promise hook captures and source-maps a stack for every promise a workflow makes,
// for the stack trace query; at V8's default depth of 10 frames that was most of what a turn's workflow code
// cost (docs/performance.md). The innermost frames, which say where each wait began, are what the query shows.
export const WORKFLOW_STACK_FRAMES = 6;
Error.stackTraceLimit = WORKFLOW_STACK_FRAMES;
