/** Environment for spawning the CLI against DynamoDB Local (no real AWS credentials leak in). */
export function localEnv(endpoint: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL_DYNAMODB: endpoint,
  };
  delete env['AWS_PROFILE'];
  delete env['AWS_SESSION_TOKEN'];
  // The machine's proxy, CA bundle and SDK retry settings are the CLI's business: tests
  // that want them set them; DynamoDB Local on loopback needs none.
  for (const name of ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy', 'AWS_CA_BUNDLE', 'AWS_MAX_ATTEMPTS', 'AWS_RETRY_MODE'])
    delete env[name];
  return env;
}
