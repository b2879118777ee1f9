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
  return env;
}
