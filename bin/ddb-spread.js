#!/usr/bin/env node
// The AWS SDK's multi-line Node version notice is replaced by one line of ours (src/cli/runtimeNotices.ts);
// other Node warnings are shown as usual. Set before the SDK loads, because it warns at client construction.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// A smaller heap between full GCs: peak RSS ~50 MB lower for a load (src/cli/heap.ts).
const { tuneHeap } = await import('../dist/cli/heap.js');
tuneHeap();
const { main } = await import('../dist/cli/main.js');
process.exitCode = await main(process.argv);
