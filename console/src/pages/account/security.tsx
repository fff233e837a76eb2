// /account: you, your ways to sign in, and your sessions.
import { Page } from '../../ui';
import { Identities } from './identities';
import { Passkeys } from './passkeys';
import { Profile } from './profile';
import { Sessions } from './sessions';
import { AccountTabs } from './tabs';
import { TwoFactor } from './totp';
import './account.css';

export default function AccountSecurity() {
  return (
    <Page title="Account" description="Your profile, ways to sign in, and sessions.">
      <AccountTabs />
      <Profile />
      <TwoFactor />
      <Passkeys />
      <Sessions />
      <Identities />
    </Page>
  );
}
