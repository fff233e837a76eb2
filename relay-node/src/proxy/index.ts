export { parseProxyHeader } from './parse-proxy-header.js';
export { MAX_PROXY_HEADER_BYTES, MAX_V1_HEADER_BYTES, V2_SIGNATURE, type ProxyHeaderResult, type ProxySource } from './header-types.js';
export {
  createProxyConnectionHandler,
  createProxyFront,
  type ProxyDropEvent,
  type ProxyDropReason,
  type ProxyFrontOptions,
  type ProxyPeer,
} from './proxy-front.js';
export { validateProxySettings } from './proxy-settings.js';
