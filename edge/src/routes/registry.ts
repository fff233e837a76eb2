// Every declared route, in one list: the app mounts them and the OpenAPI
// export and the route docs read them.
import { mountable, type MountableRoute } from '../http/define-route.js';
import * as createApiKey from './api/api-keys/create.js';
import * as listApiKeys from './api/api-keys/list.js';
import * as revokeApiKey from './api/api-keys/revoke.js';
import * as deleteApiKey from './api/api-keys/delete.js';
import * as listPermissions from './api/permissions/list.js';
import * as deleteProject from './api/project/delete.js';
import * as listAuditLog from './api/audit-log/list.js';
import * as exportData from './api/data/export.js';
import * as createPlan from './admin/plans/create.js';
import * as createUser from './admin/users/create.js';
import * as listUsers from './admin/users/list.js';
import * as setUserPassword from './admin/users/set-password.js';
import * as grantPlatformAdmin from './admin/users/platform-admin-grant.js';
import * as revokePlatformAdmin from './admin/users/platform-admin-revoke.js';
import * as listPlans from './admin/plans/list.js';
import * as listAllProjects from './admin/projects/list.js';
import * as listAllRelayNodes from './admin/relay-nodes/list.js';
import * as relayNodeDeadLetters from './admin/relay-nodes/dead-letters.js';
import * as listSecurityEvents from './admin/security-events/list.js';
import * as createProject from './admin/projects/create.js';
import * as createCredential from './admin/credentials/create.js';
import * as listCredentials from './admin/credentials/list.js';
import * as revokeCredential from './admin/credentials/revoke.js';
import * as createDomain from './api/domains/create.js';
import * as listDomains from './api/domains/list.js';
import * as getDomain from './api/domains/get.js';
import * as deleteDomain from './api/domains/delete.js';
import * as verifyDomain from './api/domains/verify.js';
import * as getDomainTracking from './api/domains/tracking-get.js';
import * as putDomainTracking from './api/domains/tracking-put.js';
import * as createSuppression from './api/suppressions/create.js';
import * as listSuppressions from './api/suppressions/list.js';
import * as deleteSuppression from './api/suppressions/delete.js';
import * as getSuppression from './api/suppressions/get.js';
import * as listStreams from './api/streams/list.js';
import * as createStream from './api/streams/create.js';
import * as deleteStream from './api/streams/delete.js';
import * as listBounces from './api/bounces/list.js';
import * as getBounce from './api/bounces/get.js';
import * as listInboundEmails from './api/inbound-emails/list.js';
import * as inboundEmailStats from './api/inbound-emails/stats.js';
import * as getInboundEmail from './api/inbound-emails/get.js';
import * as deleteInboundEmail from './api/inbound-emails/delete.js';
import * as retryInboundEmail from './api/inbound-emails/retry.js';
import * as rawInboundEmail from './api/inbound-emails/raw.js';
import * as previewInboundEmail from './api/inbound-emails/preview.js';
import * as inboundAttachment from './api/inbound-emails/attachment.js';
import * as listInboundRules from './api/inbound-rules/list.js';
import * as createInboundRule from './api/inbound-rules/create.js';
import * as testInboundRules from './api/inbound-rules/test.js';
import * as getInboundRule from './api/inbound-rules/get.js';
import * as updateInboundRule from './api/inbound-rules/update.js';
import * as deleteInboundRule from './api/inbound-rules/delete.js';
import * as listRelayNodes from './api/relay-nodes/list.js';
import * as revokeRelayNode from './api/relay-nodes/revoke.js';
import * as createWebhook from './api/webhooks/create.js';
import * as listWebhooks from './api/webhooks/list.js';
import * as deleteWebhook from './api/webhooks/delete.js';
import * as rotateWebhookSecret from './api/webhooks/rotate-secret.js';
import * as listWebhookDeliveries from './api/webhooks/deliveries.js';
import * as redeliverWebhookDelivery from './api/webhooks/redeliver.js';
import * as enableWebhook from './api/webhooks/enable.js';
import * as replayWebhook from './api/webhooks/replay.js';
import * as sendEmail from './api/emails/send.js';
import * as previewTemplateVersion from './api/templates/preview.js';
import * as previewTemplateVersionHtml from './api/templates/preview-html.js';
import * as sendTemplateTest from './api/templates/send-test.js';
import * as sendEmailBatch from './api/emails/batch.js';
import * as listEmails from './api/emails/list.js';
import * as getEmail from './api/emails/get.js';
import * as previewEmail from './api/emails/preview.js';
import * as cancelEmail from './api/emails/cancel.js';
import * as emailAttachment from './api/emails/attachment.js';
import * as getUsage from './api/usage/get.js';
import * as getAnalytics from './api/analytics/get.js';
import * as listSandboxEmails from './api/sandbox/list.js';
import * as getSandboxEmail from './api/sandbox/get.js';
import * as createSmtpServer from './api/smtp-servers/create.js';
import * as listSmtpServers from './api/smtp-servers/list.js';
import * as deleteSmtpServer from './api/smtp-servers/delete.js';
import * as testSmtpServer from './api/smtp-servers/test.js';
import * as createPoolSmtpServer from './admin/smtp-pool/create.js';
import * as listPoolSmtpServers from './admin/smtp-pool/list.js';
import * as deletePoolSmtpServer from './admin/smtp-pool/delete.js';
import * as testPoolSmtpServer from './admin/smtp-pool/test.js';
import * as generateAuthority from './admin/certificates/generate-ca.js';
import * as generateCertificate from './admin/certificates/generate.js';
import * as uploadCertificate from './admin/certificates/upload.js';
import * as listCertificates from './admin/certificates/list.js';
import * as getCertificate from './admin/certificates/get.js';
import * as certificatePem from './admin/certificates/pem.js';
import * as deleteCertificate from './admin/certificates/delete.js';
import * as listListeners from './admin/listeners/list.js';
import * as getListener from './admin/listeners/get.js';
import * as assignListenerCertificate from './admin/listeners/assign.js';
import * as unassignListenerCertificate from './admin/listeners/unassign.js';
import * as getSettings from './admin/settings/get.js';
import * as updateSettings from './admin/settings/update.js';
import * as listIdentityProviders from './admin/identity-providers/list.js';
import * as createIdentityProvider from './admin/identity-providers/create.js';
import * as getIdentityProvider from './admin/identity-providers/get.js';
import * as updateIdentityProvider from './admin/identity-providers/update.js';
import * as deleteIdentityProvider from './admin/identity-providers/delete.js';
import * as getSsoPolicy from './api/project/sso-get.js';
import * as putSsoPolicy from './api/project/sso-put.js';
import * as getInboundSpam from './api/project/inbound-spam-get.js';
import * as putInboundSpam from './api/project/inbound-spam-put.js';
import * as listMembers from './api/members/list.js';
import * as updateMember from './api/members/update.js';
import * as removeMember from './api/members/delete.js';
import * as leaveProject from './api/members/leave.js';
import * as listMemberGroups from './api/member-groups/list.js';
import * as createMemberGroup from './api/member-groups/create.js';
import * as updateMemberGroup from './api/member-groups/update.js';
import * as deleteMemberGroup from './api/member-groups/delete.js';
import * as createInvitation from './api/invitations/create.js';
import * as listInvitations from './api/invitations/list.js';
import * as revokeInvitation from './api/invitations/revoke.js';
import * as acceptInvitation from './app/invitations/accept.js';
import * as requestPasswordReset from './app/password-reset/request.js';
import * as completePasswordReset from './app/password-reset/complete.js';
import * as createTemplate from './api/templates/create.js';
import * as listTemplates from './api/templates/list.js';
import * as getTemplate from './api/templates/get.js';
import * as updateTemplate from './api/templates/update.js';
import * as deleteTemplate from './api/templates/delete.js';
import * as listTemplateVersions from './api/templates/list-versions.js';
import * as createTemplateVersion from './api/templates/create-version.js';
import * as updateTemplateVersion from './api/templates/update-version.js';
import * as deleteTemplateVersion from './api/templates/delete-version.js';
import * as activateTemplateVersion from './api/templates/activate.js';
import * as putTemplateLocalizations from './api/templates/put-localizations.js';
import * as listTemplateLocalizations from './api/templates/list-localizations.js';
import * as createStylesheet from './api/stylesheets/create.js';
import * as listStylesheets from './api/stylesheets/list.js';
import * as getStylesheet from './api/stylesheets/get.js';
import * as updateStylesheet from './api/stylesheets/update.js';
import * as deleteStylesheet from './api/stylesheets/delete.js';

// One `mountable` call per module, so each route's handler is checked against its own declaration.
export const apiRoutes: MountableRoute[] = [
  mountable(createApiKey), mountable(listApiKeys), mountable(revokeApiKey), mountable(deleteApiKey),
  mountable(listPermissions), mountable(deleteProject), mountable(listAuditLog), mountable(exportData),
  mountable(createPlan), mountable(createUser), mountable(listUsers), mountable(setUserPassword), mountable(grantPlatformAdmin), mountable(revokePlatformAdmin), mountable(createProject),
  mountable(listPlans), mountable(listAllProjects), mountable(listAllRelayNodes), mountable(relayNodeDeadLetters),
  mountable(createCredential), mountable(listCredentials), mountable(revokeCredential),
  mountable(listSecurityEvents),
  mountable(createDomain), mountable(listDomains), mountable(getDomain), mountable(deleteDomain),
  mountable(verifyDomain), mountable(getDomainTracking), mountable(putDomainTracking),
  mountable(createSuppression), mountable(listSuppressions), mountable(getSuppression), mountable(deleteSuppression),
  mountable(listStreams), mountable(createStream), mountable(deleteStream),
  mountable(listBounces), mountable(getBounce),
  // `stats` before `{id}`: the router tries routes in this order, and `stats` is no UUID.
  mountable(listInboundEmails), mountable(inboundEmailStats), mountable(getInboundEmail), mountable(deleteInboundEmail),
  mountable(retryInboundEmail), mountable(rawInboundEmail), mountable(previewInboundEmail), mountable(inboundAttachment),
  mountable(listInboundRules), mountable(createInboundRule), mountable(testInboundRules), mountable(getInboundRule),
  mountable(updateInboundRule), mountable(deleteInboundRule),
  mountable(listRelayNodes), mountable(revokeRelayNode),
  mountable(createWebhook), mountable(listWebhooks), mountable(deleteWebhook), mountable(rotateWebhookSecret),
  mountable(listWebhookDeliveries), mountable(redeliverWebhookDelivery), mountable(enableWebhook), mountable(replayWebhook),
  mountable(sendEmail), mountable(sendEmailBatch), mountable(listEmails), mountable(getEmail), mountable(previewEmail), mountable(cancelEmail), mountable(emailAttachment),
  mountable(previewTemplateVersion), mountable(previewTemplateVersionHtml), mountable(sendTemplateTest),
  mountable(getUsage), mountable(listSandboxEmails), mountable(getSandboxEmail),
  mountable(getAnalytics),
  mountable(createSmtpServer), mountable(listSmtpServers), mountable(deleteSmtpServer), mountable(testSmtpServer),
  mountable(createPoolSmtpServer), mountable(listPoolSmtpServers), mountable(deletePoolSmtpServer), mountable(testPoolSmtpServer),
  // `generate-ca` and `generate` are POSTs, `{name}` GET and DELETE only: no clash.
  mountable(generateAuthority), mountable(generateCertificate), mountable(uploadCertificate),
  mountable(listCertificates), mountable(getCertificate), mountable(certificatePem), mountable(deleteCertificate),
  mountable(listListeners), mountable(getListener), mountable(assignListenerCertificate), mountable(unassignListenerCertificate),
  mountable(createTemplate), mountable(listTemplates), mountable(getTemplate), mountable(updateTemplate), mountable(deleteTemplate),
  mountable(listTemplateVersions), mountable(createTemplateVersion), mountable(updateTemplateVersion), mountable(deleteTemplateVersion),
  mountable(activateTemplateVersion), mountable(putTemplateLocalizations), mountable(listTemplateLocalizations),
  mountable(createStylesheet), mountable(listStylesheets), mountable(getStylesheet), mountable(updateStylesheet), mountable(deleteStylesheet),
  // `leave` is a POST, `{userId}` PATCH and DELETE only: no clash.
  mountable(listMembers), mountable(updateMember), mountable(removeMember), mountable(leaveProject),
  mountable(listMemberGroups), mountable(createMemberGroup), mountable(updateMemberGroup), mountable(deleteMemberGroup),
  mountable(createInvitation), mountable(listInvitations), mountable(revokeInvitation),
  mountable(getSettings), mountable(updateSettings), mountable(getSsoPolicy), mountable(putSsoPolicy), mountable(getInboundSpam), mountable(putInboundSpam),
  mountable(listIdentityProviders), mountable(createIdentityProvider), mountable(getIdentityProvider), mountable(updateIdentityProvider), mountable(deleteIdentityProvider),
];

// Console routes (`/app/api`): browser sessions only.
import * as followEvents from './app/events/stream.js';
import * as signIn from './app/session/create.js';
import * as whoAmI from './app/session/get.js';
import * as signOut from './app/session/delete.js';
import * as signOutAll from './app/session/sign-out-all.js';
import * as switchProject from './app/session/switch-project.js';
import * as chooseDefaultProject from './app/account/default-project.js';
import * as startTotp from './app/account/totp-start.js';
import * as confirmTotp from './app/account/totp-confirm.js';
import * as disableTotp from './app/account/totp-delete.js';
import * as passkeySignInOptions from './app/session/passkey/options.js';
import * as passkeySignIn from './app/session/passkey/sign-in.js';
import * as oidcProviders from './app/session/oidc/providers.js';
import * as oidcStart from './app/session/oidc/start.js';
import * as oidcCallback from './app/session/oidc/callback.js';
import * as passkeyRegistrationOptions from './app/account/passkeys/registration-options.js';
import * as addPasskey from './app/account/passkeys/create.js';
import * as listPasskeys from './app/account/passkeys/list.js';
import * as renamePasskey from './app/account/passkeys/rename.js';
import * as deletePasskey from './app/account/passkeys/delete.js';
import * as startIdentityLink from './app/account/identities/create.js';
import * as listIdentities from './app/account/identities/list.js';
import * as unlinkIdentity from './app/account/identities/delete.js';
import * as listOwnSecurityEvents from './app/account/security-events/list.js';
import * as listOwnSessions from './app/account/sessions/list.js';
import * as endOwnSession from './app/account/sessions/delete.js';

export const appRoutes: MountableRoute[] = [
  mountable(acceptInvitation), mountable(requestPasswordReset), mountable(completePasswordReset),
  mountable(followEvents),
  mountable(signIn), mountable(whoAmI), mountable(signOut), mountable(signOutAll), mountable(switchProject), mountable(chooseDefaultProject),
  mountable(startTotp), mountable(confirmTotp), mountable(disableTotp),
  // `registration-options` is a POST, `{id}` PATCH and DELETE only: no clash.
  mountable(passkeySignInOptions), mountable(passkeySignIn),
  // `providers` and `callback` are literal segments, `{provider_id}/start` has two: no clash.
  mountable(oidcProviders), mountable(oidcCallback), mountable(oidcStart),
  mountable(passkeyRegistrationOptions), mountable(addPasskey), mountable(listPasskeys), mountable(renamePasskey), mountable(deletePasskey),
  mountable(startIdentityLink), mountable(listIdentities), mountable(unlinkIdentity),
  mountable(listOwnSecurityEvents), mountable(listOwnSessions), mountable(endOwnSession),
];

// The relay-node channel (docs/relay-protocol.md): its own credential, limiters and body limits.
import * as enrollRelayNode from './relay/nodes/enroll.js';
import * as relayHeartbeat from './relay/nodes/heartbeat.js';
import * as relayDomains from './relay/domains/list.js';
import * as relayCertificate from './relay/certificate/get.js';
import * as relayOfferSelfSigned from './relay/certificate/offer-self-signed.js';
import * as relayCertificateBundle from './relay/certificate/bundle.js';
import * as relayInbound from './relay/inbound/forward.js';
import * as relayInboundBatch from './relay/inbound/forward-batch.js';
import * as relayOutboundClaim from './relay/outbound/claim.js';
import * as relayOutboundResults from './relay/outbound/results.js';
import * as relayOutboundRenew from './relay/outbound/renew.js';
import * as relaySubmissionAuth from './relay/submission/auth.js';
import * as relaySubmissionSubmit from './relay/submission/submit.js';
import * as relaySubmissionLease from './relay/submission/lease.js';
import * as relaySubmissionBatch from './relay/submission/batch.js';
import * as relayAcmeLease from './relay/acme/lease.js';
import * as relayAcmeReportFailure from './relay/acme/report-failure.js';
import * as relayAcmePublishChallenge from './relay/acme/publish-challenge.js';
import * as relayAcmeGetChallenge from './relay/acme/get-challenge.js';
import * as relayAcmeRemoveChallenge from './relay/acme/remove-challenge.js';
import * as relayAcmeStoreCertificate from './relay/acme/store-certificate.js';
import { mountableRelay, type MountableRelayRoute } from '../http/define-relay-route.js';

export const relayRoutes: MountableRelayRoute[] = [
  mountableRelay(enrollRelayNode), mountableRelay(relayHeartbeat), mountableRelay(relayDomains),
  mountableRelay(relayCertificate), mountableRelay(relayCertificateBundle), mountableRelay(relayOfferSelfSigned), mountableRelay(relayInbound), mountableRelay(relayInboundBatch),
  mountableRelay(relayOutboundClaim), mountableRelay(relayOutboundResults), mountableRelay(relayOutboundRenew),
  mountableRelay(relaySubmissionAuth), mountableRelay(relaySubmissionSubmit), mountableRelay(relaySubmissionLease), mountableRelay(relaySubmissionBatch),
  mountableRelay(relayAcmeLease), mountableRelay(relayAcmeReportFailure), mountableRelay(relayAcmePublishChallenge),
  mountableRelay(relayAcmeGetChallenge), mountableRelay(relayAcmeRemoveChallenge), mountableRelay(relayAcmeStoreCertificate),
];

// Provider webhooks (`/webhooks/*`, docs/ses.md): no credential of ours; each message carries its own proof.
import * as receiveSes from './webhooks/ses/receive.js';
import { mountableWebhook, type MountableWebhookRoute } from '../http/define-webhook-route.js';

export const webhookRoutes: MountableWebhookRoute[] = [mountableWebhook(receiveSes)];

// Open and click tracking (`/t/*`, docs/tracking.md): no credential; the signed token in the path is the proof.
import * as trackOpen from './tracking/open.js';
import * as trackClick from './tracking/click.js';
import { mountableTracking, type MountableTrackingRoute } from '../http/define-tracking-route.js';

export const trackingRoutes: MountableTrackingRoute[] = [mountableTracking(trackOpen), mountableTracking(trackClick)];

// One-click unsubscribe (`/unsubscribe/*`, docs/sending.md): no credential; the signed token in the path is the proof.
import * as showUnsubscribe from './unsubscribe/show.js';
import * as postUnsubscribe from './unsubscribe/post.js';
import { mountableUnsubscribe, type MountableUnsubscribeRoute } from '../http/define-unsubscribe-route.js';

export const unsubscribeRoutes: MountableUnsubscribeRoute[] = [mountableUnsubscribe(showUnsubscribe), mountableUnsubscribe(postUnsubscribe)];
