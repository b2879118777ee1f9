import { Agent as HttpAgent, type AgentOptions, type ClientRequest } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type * as HttpProxyAgentJs from 'http-proxy-agent';
import type * as HttpsProxyAgentJs from 'https-proxy-agent';
import { proxyForUrl, type Env } from './awsEnv.js';
import { lazyRequire } from '../shared/lazyRequire.js';

/** The proxy agents, loaded when a request first goes through a proxy: most runs use none. */
const httpProxyAgent = lazyRequire<typeof HttpProxyAgentJs>('http-proxy-agent', 'a request through HTTP_PROXY');
const httpsProxyAgent = lazyRequire<typeof HttpsProxyAgentJs>('https-proxy-agent', 'a request through HTTPS_PROXY');

/** http.Agent's hook for a new request (undocumented in @types/node, used by every proxy agent). */
interface RequestHook {
  addRequest(req: ClientRequest, options: { host?: string | null; hostname?: string | null; port?: number | string | null; ca?: string | Buffer }): void;
}

/**
 * An agent that hands each request, as it is created, to a direct agent or to a proxy agent chosen from
 * HTTPS_PROXY / HTTP_PROXY / NO_PROXY (as curl does). SDK v3 ignores those variables; this is the agent
 * it is given when one is set. http targets go through the proxy as absolute-URI requests
 * (http-proxy-agent), https targets through a CONNECT tunnel (https-proxy-agent); `ca` (a CA bundle)
 * applies to the target's TLS and to an https proxy's. The choice is made synchronously in addRequest,
 * before the request writes its header: http-proxy-agent rewrites the request path there.
 */
export class EnvProxyAgent extends HttpAgent {
  private readonly direct: HttpAgent;
  private readonly viaProxy = new Map<string, HttpAgent>();

  constructor(
    private readonly secure: boolean,
    private readonly env: Env,
    private readonly agentOptions: AgentOptions & { ca?: string | Buffer },
  ) {
    super(agentOptions);
    // https.request checks the agent's protocol, and takes its default port from it.
    Object.assign(this, { protocol: secure ? 'https:' : 'http:', defaultPort: secure ? 443 : 80 });
    this.direct = secure ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  }

  /** The proxy URL a request to host:port uses, or undefined when it goes direct. */
  proxyFor(host: string, port: number | string | undefined): string | undefined {
    const hostPart = host.includes(':') ? `[${host}]` : host;
    const portPart = port === undefined || port === '' ? '' : `:${port}`;
    return proxyForUrl(new URL(`${this.secure ? 'https' : 'http'}://${hostPart}${portPart}`), this.env);
  }

  agentFor(host: string, port: number | string | undefined): HttpAgent {
    const proxy = this.proxyFor(host, port);
    if (proxy === undefined) return this.direct;
    let agent = this.viaProxy.get(proxy);
    if (!agent) {
      agent = this.secure ? new (httpsProxyAgent().HttpsProxyAgent)(proxy, this.agentOptions) : new (httpProxyAgent().HttpProxyAgent)(proxy, this.agentOptions);
      this.viaProxy.set(proxy, agent);
    }
    return agent;
  }

  addRequest(req: ClientRequest, options: Parameters<RequestHook['addRequest']>[1]): void {
    const agent = this.agentFor(options.hostname ?? options.host ?? 'localhost', options.port ?? undefined);
    // https-proxy-agent takes the target's TLS options from the request's, not from its own.
    const ca = this.secure ? this.agentOptions.ca : undefined;
    (agent as unknown as RequestHook).addRequest(req, ca === undefined ? options : { ...options, ca });
  }

  override destroy(): void {
    this.direct.destroy();
    for (const agent of this.viaProxy.values()) agent.destroy();
    super.destroy();
  }
}
