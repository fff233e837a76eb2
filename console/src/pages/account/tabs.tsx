// The two pages of the account area, one click apart.
import { Link, useLocation } from 'wouter-preact';

const TABS = [
  { href: '/account', label: 'Security' },
  { href: '/account/members', label: 'Members' },
];

export function AccountTabs() {
  const [location] = useLocation();
  return (
    <nav class="tabs" aria-label="Account">
      {TABS.map((t) => <Link href={t.href} class={`tab${location === t.href ? ' tab-current' : ''}`} aria-current={location === t.href ? 'page' : undefined}>{t.label}</Link>)}
    </nav>
  );
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }) + ' UTC' : '—');
