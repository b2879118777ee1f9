#!/usr/bin/env node
// Output stays clean: Node and AWS SDK warnings (such as the SDK's Node version notice) are shown only
// with --verbose. Set before the SDK loads, because it warns once at client construction.
if (!process.argv.includes('--verbose')) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  process.emitWarning = () => {};
}
const { main } = await import('../dist/cli/main.js');
process.exitCode = await main(process.argv);
