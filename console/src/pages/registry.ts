// The one route table of the signed-in console: every area, in nav order.
// An area adds its routes in its own pages/<area>/index.tsx; this list only
// changes when an area is added.
import type { Area } from '../routes';
import { area as keys } from './keys';
import { area as domains } from './domains';
import { area as send } from './send';
import { area as emails } from './emails';
import { area as inbound } from './inbound';
import { area as webhooks } from './webhooks';
import { area as templates } from './templates';
import { area as suppressions } from './suppressions';
import { area as bounces } from './bounces';
import { area as analytics } from './analytics';
import { area as audit } from './audit';
import { area as account } from './account';
import { area as admin } from './admin';

export const areas: readonly Area[] = [
  emails, send, domains, keys, inbound, webhooks, templates, suppressions, bounces, analytics, audit, account, admin,
];

/** Where "/" leads once signed in. */
export const HOME = '/emails';
