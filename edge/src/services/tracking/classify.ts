// Who fetched a pixel or followed a link (docs/tracking.md, "Human or
// machine"): a user agent class, and whether the request looks like a
// machine's: Apple Mail Privacy Protection fetching every image on delivery,
// a security scanner or link checker following every link, a tool or bot.
// Machine requests are recorded and reported (`machine: true`), never
// counted as human opens or clicks. The first rule that matches decides.
import { parseIp } from '@edgemail/shared';

export type UserAgentClass =
  | 'browser' | 'mobile_browser' | 'mail_client' | 'mail_proxy' | 'apple_proxy' | 'scanner' | 'bot' | 'none' | 'unknown';

export type MachineReason = 'head_request' | 'no_user_agent' | 'apple_privacy_proxy' | 'security_scanner' | 'bot' | 'too_soon_after_delivery';

export interface Verdict {
  userAgentClass: UserAgentClass;
  machine: boolean;
  /** Why it is a machine's; null for a human's. */
  reason: MachineReason | null;
}

export interface Request {
  method: string;
  userAgent: string | undefined;
  clientIp: string;
  /** Seconds between the job's issue (just before delivery) and this request. */
  secondsSinceIssue: number;
}

/** Security gateways that open or follow mail's links before the recipient does. */
const SCANNER = /barracuda|mimecast|proofpoint|urldefense|safelinks|symantec|messagelabs|trend ?micro|fortinet|fortiguard|sophos|forcepoint|zscaler|ironport|cisco|bitdefender|kaspersky|checkpoint|check point|vade|hornetsecurity|spamtitan|mailguard|libraesva|trustwave|appriver|cloudmark/i;
/** Tools, crawlers and link-preview fetchers. */
const BOT = /bot\b|bot\/|crawl|spider|slurp|preview|curl\/|wget\/|python|go-http-client|java\/|okhttp|axios|node-fetch|undici|headless|phantomjs|libwww|httpclient|scrapy|facebookexternalhit|embedly|whatsapp|skypeuripreview|validator|monitor|http_request|postman|insomnia|^node$/i;
/** Image proxies that fetch when the recipient opens (Gmail, Yahoo): a human's open. */
const MAIL_PROXY = /googleimageproxy|yahoomailproxy|ggpht\.com/i;
const MAIL_CLIENT = /outlook|thunderbird|microsoft office|ms-office|mso\/|airmail|spark\/|postbox|ymail|gmail\//i;
const MOBILE = /mobile|android|iphone|ipad|ipod/i;
const BROWSER = /chrome\/|firefox\/|safari\/|edg\/|opr\//i;

/** Apple's egress network (17.0.0.0/8): Mail Privacy Protection fetches from it. */
function isAppleAddress(ip: string): boolean {
  const parsed = parseIp(ip);
  return parsed !== null && /^17\.\d+\.\d+\.\d+$/.test(ip);
}

export function userAgentClass(ua: string | undefined, clientIp = ''): UserAgentClass {
  const agent = (ua ?? '').trim();
  if (!agent) return 'none';
  // Mail Privacy Protection's proxy says only `Mozilla/5.0`, from Apple's network.
  if (agent === 'Mozilla/5.0' || isAppleAddress(clientIp)) return 'apple_proxy';
  if (SCANNER.test(agent)) return 'scanner';
  if (MAIL_PROXY.test(agent)) return 'mail_proxy';
  if (BOT.test(agent)) return 'bot';
  if (MAIL_CLIENT.test(agent)) return 'mail_client';
  // Apple Mail and other WebKit mail views: AppleWebKit without a browser's own token.
  if (/applewebkit/i.test(agent) && !BROWSER.test(agent)) return 'mail_client';
  if (BROWSER.test(agent) || /^mozilla\//i.test(agent)) return MOBILE.test(agent) ? 'mobile_browser' : 'browser';
  return 'unknown';
}

/**
 * @param machineWindowSeconds `tracking.machine_window`: a request this soon
 *   after the job was issued is a prefetch (nobody reads mail that fast)
 */
export function classify(request: Request, machineWindowSeconds: number): Verdict {
  const cls = userAgentClass(request.userAgent, request.clientIp);
  const machine = (reason: MachineReason): Verdict => ({ userAgentClass: cls, machine: true, reason });
  if (request.method === 'HEAD') return machine('head_request');
  if (cls === 'none') return machine('no_user_agent');
  if (cls === 'apple_proxy') return machine('apple_privacy_proxy');
  if (cls === 'scanner') return machine('security_scanner');
  if (cls === 'bot') return machine('bot');
  if (request.secondsSinceIssue < machineWindowSeconds) return machine('too_soon_after_delivery');
  return { userAgentClass: cls, machine: false, reason: null };
}
