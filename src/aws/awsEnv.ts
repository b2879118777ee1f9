/**
 * What the environment of a corporate network or a CI job asks of the DynamoDB client, read the way
 * curl and the AWS CLI read it: the proxy for a URL (HTTPS_PROXY / HTTP_PROXY / NO_PROXY, lower-case
 * first), the CA bundle (AWS_CA_BUNDLE), and the SDK
 * retry variables ddb-spread does not use. Pure: the environment is passed in.
 */
export type Env = Readonly<Record<string, string | undefined>>;

function variable(env: Env, name: string): string | undefined {
  const value = env[name.toLowerCase()] ?? env[name.toUpperCase()];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** True when any proxy variable is set (the client then routes each connection through proxyForUrl). */
export function proxyConfigured(env: Env): boolean {
  return variable(env, 'https_proxy') !== undefined || variable(env, 'http_proxy') !== undefined;
}

/**
 * The proxy URL for a request to `target`, or undefined to connect directly: https_proxy for https,
 * http_proxy for http, unless NO_PROXY names the host. NO_PROXY entries are comma- or space-separated:
 * `*` (every host), a host name matching itself and its subdomains (`example.com`, `.example.com`),
 * an IP address, each optionally with `:port`.
 */
export function proxyForUrl(target: URL, env: Env): string | undefined {
  const secure = target.protocol === 'https:';
  const proxy = variable(env, secure ? 'https_proxy' : 'http_proxy');
  if (proxy === undefined) return undefined;
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const port = target.port === '' ? (secure ? '443' : '80') : target.port;
  const noProxy = variable(env, 'no_proxy');
  if (noProxy !== undefined && bypasses(host, port, noProxy)) return undefined;
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(proxy) ? proxy : `http://${proxy}`;
}

function bypasses(host: string, port: string, noProxy: string): boolean {
  for (const raw of noProxy.split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return true;
    const { entryHost, entryPort } = splitHostPort(entry);
    if (entryPort !== undefined && entryPort !== port) continue;
    const name = entryHost.replace(/^\*?\./, '');
    if (host === name || host.endsWith(`.${name}`)) return true;
  }
  return false;
}

/** `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 address (no port). */
function splitHostPort(entry: string): { entryHost: string; entryPort: string | undefined } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { entryHost: bracketed[1]!, entryPort: bracketed[2] };
  const withPort = /^([^:]+):(\d+)$/.exec(entry);
  if (withPort) return { entryHost: withPort[1]!, entryPort: withPort[2] };
  return { entryHost: entry, entryPort: undefined };
}

/** The CA bundle file: --ca-bundle, then AWS_CA_BUNDLE. */
export function caBundleFrom(flag: string | undefined, env: Env): string | undefined {
  return flag || variable(env, 'AWS_CA_BUNDLE');
}

/**
 * The SDK's own retry settings are not used (the SDK makes one attempt per call; ddb-spread retries
 * per item, --max-attempts): one line saying so when they are set, else undefined.
 */
export function ignoredRetryEnvNotice(env: Env, maxAttempts: number): string | undefined {
  const set = ['AWS_MAX_ATTEMPTS', 'AWS_RETRY_MODE'].filter((name) => variable(env, name) !== undefined);
  if (set.length === 0) return undefined;
  const shown = set.map((name) => `${name}=${variable(env, name)!}`).join(' and ');
  return `${shown} ${set.length > 1 ? 'are' : 'is'} ignored: ddb-spread is the one retry layer (the SDK's retries are off); use --max-attempts (now ${maxAttempts}) for the sends per item`;
}
